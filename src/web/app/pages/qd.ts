/**
 * The quality-diversity page: CycleQD runs, each archive as a heat map with a generation slider.
 *
 *   #/qd                                     the runs, newest first
 *   #/qd/<id>?generation=g&task=t&elite=e    one run at generation g (the newest without one),
 *                                            archive t only (all without), elite e's scores open
 */
import { html } from "../html.js";
import type { PageProps } from "../main.js";
import { QdList } from "./qd/list.js";
import { QdRun } from "./qd/run.js";
import "./qd.css";

export function QdPage({ route }: PageProps) {
  // Keyed by the run: another run's page starts empty rather than showing the last one's maps.
  const id = route.segments[1];
  return id === undefined
    ? html`<${QdList} />`
    : html`<${QdRun} key=${id} id=${id} route=${route} />`;
}
