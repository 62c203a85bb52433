// Bundles src/ into dist/dashboard/, which Django serves as static files (no CDN: the dashboard
// must work air-gapped). Entry names are stable so templates can use {% static %} without a
// manifest; lazily loaded chunks (chart.js, cytoscape) carry a content hash.
import { build, context } from "esbuild";
import { rmSync } from "node:fs";

const watch = process.argv.includes("--watch");
const options = {
  entryPoints: { app: "src/main.js", style: "src/style.css" },
  outdir: "dist/dashboard",
  bundle: true,
  splitting: true,
  format: "esm",
  minify: !watch,
  sourcemap: watch ? "inline" : false,
  target: ["es2020"],
  chunkNames: "chunks/[name]-[hash]",
  legalComments: "linked",
  logLevel: "info",
};

rmSync("dist", { recursive: true, force: true });
if (watch) {
  const ctx = await context(options);
  await ctx.watch();
} else {
  await build(options);
}
