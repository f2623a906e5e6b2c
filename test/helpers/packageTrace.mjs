// Loaded with --import into a service under test: every npm package whose files the module loader reads is appended,
// one name a line, to the file named by PACKAGE_TRACE_FILE (what start-up loads, for the lazy-loading test).
import { register } from 'node:module';

register(new URL('./packageTraceHooks.mjs', import.meta.url), { data: { file: process.env.PACKAGE_TRACE_FILE } });
