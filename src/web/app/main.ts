/**
 * The web app: a shell with one link per kind of thing in the store, and the page the address
 * names. Each capability's pages live in pages/<kind>.ts and get the route.
 */
import type { FunctionComponent } from "preact";
import { render } from "preact";
import type { Capabilities, MetaResponse } from "../api/meta.js";
import "./style.css";
import { html } from "./html.js";
import { useApi } from "./live.js";
import { AnalysesPage } from "./pages/analyses.js";
import { EmptyStore } from "./pages/empty.js";
import { EpisodePage } from "./pages/episode.js";
import { GoalsPage } from "./pages/goals.js";
import { QdPage } from "./pages/qd.js";
import { ComparePage, RunsPage } from "./pages/runs.js";
import { SearchesPage } from "./pages/searches.js";
import { TrainingPage } from "./pages/training.js";
import { type Route, useRoute } from "./router.js";
import { Loaded } from "./ui.js";

export interface PageProps {
  route: Route;
  meta: MetaResponse;
}

/** The first path segment → its page, the capability that shows it in the menu, and its name. */
const PAGES: Record<
  string,
  { page: FunctionComponent<PageProps>; shows: keyof Capabilities; label?: string }
> = {
  runs: { page: RunsPage, shows: "runs", label: "Runs" },
  compare: { page: ComparePage, shows: "runs" },
  episodes: { page: EpisodePage, shows: "runs" },
  searches: { page: SearchesPage, shows: "searches", label: "Search" },
  training: { page: TrainingPage, shows: "training", label: "Training" },
  qd: { page: QdPage, shows: "qd", label: "Quality-diversity" },
  goals: { page: GoalsPage, shows: "goals", label: "Goals" },
  analyses: { page: AnalysesPage, shows: "analyses", label: "Analyses" },
};

function App() {
  const route = useRoute();
  const meta = useApi<MetaResponse>("/meta");
  return html`<${Loaded} state=${meta}>${(data: MetaResponse) => html`<${Shell} route=${route} meta=${data} />`}<//>`;
}

function Shell({ route, meta }: PageProps) {
  const { capabilities, store, bundle } = meta;
  const first = route.segments[0] ?? "";
  // The menu: the pages with a name whose capability the store has; the first is the home page.
  const shown = Object.entries(PAGES).filter(([, p]) => p.label && capabilities[p.shows] > 0);
  const Page = PAGES[first]?.page ?? shown[0]?.[1].page;
  return html`<header>
      <a class="brand" href="#/">clade view</a>
      <nav>${shown.map(
        ([segment, p]) =>
          html`<a href=${`#/${segment}`} class=${first === segment ? "active" : ""} data-nav=${segment}>${p.label} <small>${capabilities[p.shows]}</small></a>`,
      )}</nav>
      <span class="store" title=${store.path}>${bundle ? "static bundle" : store.path}${
        store.readOnlyReason ? html` · <em>${store.readOnlyReason}</em>` : ""
      }</span>
    </header>
    <main>${Page ? html`<${Page} route=${route} meta=${meta} />` : html`<${EmptyStore} meta=${meta} />`}</main>`;
}

render(html`<${App} />`, document.getElementById("app") as HTMLElement);
