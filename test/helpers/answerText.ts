// An answer's text for tests that walk every route: the whole body, or an event stream's first chunk (its opening
// events) before it is closed, since a stream (GET /api/events, /api/wallboard/events) never ends by itself.
export async function answerText(response: Response): Promise<string> {
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response.text();
  const reader = response.body?.getReader();
  if (!reader) return '';
  const { value } = await reader.read();
  await reader.cancel();
  return value ? new TextDecoder().decode(value) : '';
}
