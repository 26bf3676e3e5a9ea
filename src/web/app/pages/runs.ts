/**
 * The evaluation runs' pages: `#/runs` (the list), `#/runs/<id>` (one run) and
 * `#/compare?a=ID&b=ID` (two runs task by task). Each lives in pages/runs/.
 */

import { html } from "../html.js";
import type { PageProps } from "../main.js";
import "./runs.css";
import { RunList } from "./runs/list.js";
import { RunPage } from "./runs/run.js";

export { ComparePage } from "./runs/compare.js";

export function RunsPage({ route }: PageProps) {
  const id = route.segments[1];
  return id === undefined
    ? html`<${RunList} route=${route} />`
    : html`<${RunPage} key=${id} route=${route} id=${id} />`;
}
