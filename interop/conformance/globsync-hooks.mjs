// Resolve hook for globsync-polyfill.mjs: `fs` / `node:fs` imported from a package under
// node_modules/ resolves to fs-with-globsync.mjs (the shim itself gets the real node:fs).
const SHIM = new URL('./fs-with-globsync.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL &&
    context.parentURL !== SHIM &&
    context.parentURL.includes('/node_modules/')
  ) {
    return { url: SHIM, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
