// node:fs plus globSync (Node 22 API) on top of the `glob` package, for Node 20.
import fs from 'node:fs';
import { globSync as globPkgSync } from 'glob';

export * from 'node:fs';

// fs.globSync(pattern | pattern[], { cwd, exclude }) -> relative paths, like Node 22.
export function globSync(pattern, options = {}) {
  if (typeof fs.globSync === 'function') return fs.globSync(pattern, options);
  const { cwd, exclude } = options;
  const ignore = Array.isArray(exclude) ? exclude : undefined;
  const filter = typeof exclude === 'function' ? exclude : undefined;
  const found = globPkgSync(pattern, { cwd: cwd === undefined ? undefined : String(cwd), ignore, posix: true });
  return filter ? found.filter((p) => !filter(p)) : found;
}

export default { ...fs, globSync };
