import { defineConfig } from 'vitest/config';
import { existsSync, writeFileSync } from 'node:fs';

// The Go binary embeds frontend/dist (`all:` prefix) and needs it to exist at
// compile time, so the committed dist/.gitkeep must survive every build: we
// keep emptyOutDir (stale hashed assets must not pile up and get embedded)
// and re-create the marker when the bundle is written.
const keepGitkeep = {
  name: 'gatehouse-keep-gitkeep',
  closeBundle() {
    const marker = new URL('./dist/.gitkeep', import.meta.url);
    if (!existsSync(marker)) writeFileSync(marker, '');
  },
};

export default defineConfig({
  // Relative asset URLs: the same index.html is served from / by
  // `gatehouse serve` and from the Wails asset server.
  base: './',
  plugins: [keepGitkeep],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // Everything is bundled: no external fonts, scripts or requests.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    // `npm run dev` against a running `gatehouse serve`: set GATEHOUSE_URL
    // to its origin (the session cookie must be obtained there first).
    proxy: process.env.GATEHOUSE_URL ? { '/api': { target: process.env.GATEHOUSE_URL, changeOrigin: false } } : undefined,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
