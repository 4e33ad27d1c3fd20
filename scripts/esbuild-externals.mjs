/**
 * The esbuild plugin every Uplink bundle uses (the product's and the tests' own): packages stay
 * external (node_modules resolves them at run time), except TypeBox, which the wire shapes are
 * declared with. A sandboxed preload cannot require it, a bundle written outside the repository
 * (a test's temp dir) cannot resolve it, and bundled it loads in ~10 ms where resolving its ~200
 * modules at every CLI start takes ~100 ms.
 */
export const BUNDLED = /^@sinclair\/typebox(\/|$)/;

export const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.kind === 'entry-point' || BUNDLED.test(args.path) ? undefined : { path: args.path, external: true }));
  },
};
