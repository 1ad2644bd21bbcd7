// Node 20 lacks fs.globSync (added in Node 22), and @modelcontextprotocol/conformance 0.1.x
// imports it by name (`import { globSync } from "fs"`). A named ESM import of a builtin cannot
// be satisfied by assigning fs.globSync at run time (module.syncBuiltinESMExports() never adds
// names), so this preload registers a resolve hook that serves `fs` / `node:fs` to modules under
// node_modules/ from a shim that re-exports node:fs plus a globSync built on the `glob` package.
//
// Usage: node --import ./globsync-polyfill.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js ...
// Only used when no Node >= 22 is available (see ../conformance.sh).
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('./globsync-hooks.mjs', import.meta.url);
}
