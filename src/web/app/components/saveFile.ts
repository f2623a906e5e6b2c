// Hands a file the app fetched to the browser's downloads: a link to an object URL, clicked, the URL freed later
// (not at once: the download reads it after the click).

/** Saves `blob` as `name` in the browser's downloads. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
