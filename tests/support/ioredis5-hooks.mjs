// Module resolution hooks (node:module register) that send every ESM import of 'ioredis', or of a
// path inside it, to the `ioredis5` dev dependency: ioredis 5 installed under an npm alias beside
// ioredis 6. Ferry supports both majors, and this is how one test process runs against 5 without
// a second checkout. Registered by use-ioredis5.mjs; ioredis's own require() calls need no
// mapping, as they resolve inside its folder.
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'ioredis' || specifier.startsWith('ioredis/')) {
    return nextResolve(`ioredis5${specifier.slice('ioredis'.length)}`, context)
  }
  return nextResolve(specifier, context)
}
