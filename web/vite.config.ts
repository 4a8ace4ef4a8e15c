import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dashboard is served by the service itself at / (src/http/dashboard.ts): everything is bundled,
// nothing is fetched from another origin.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
});
