/** Stylesheets imported for esbuild to gather into app.css. */
declare module "*.css";
