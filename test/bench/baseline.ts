// Baseline child: bare Koa 3 + @koa/router answering a small JSON object, the ceiling for any Koa app on this machine.
// Prints {"url"} on its first stdout line once it listens; SIGTERM stops it.
import Router from '@koa/router';
import Koa from 'koa';

const app = new Koa();
const router = new Router();
router.get('/hello', (ctx) => {
  ctx.body = { hello: 'world', ok: true, n: 1 };
});
app.use(router.routes());

const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/hello` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
