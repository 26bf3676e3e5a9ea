/**
 * The goals pages (goal-oriented evaluation of conversations, docs/goals.md):
 *   #/goals                                   the evaluations
 *   #/goals/<id>                              one: GSR, root causes, conversations
 *   #/goals/<id>/conversations/<position>     a conversation by goals, the judges side by side
 *   #/goals/<id>/queue                        the review queue, where a reviewer sets labels
 */
import "./goals.css";
import { isBundle } from "../api.js";
import { html } from "../html.js";
import type { PageProps } from "../main.js";
import { ErrorLine } from "../ui.js";
import { GoalConversation } from "./goals/conversation.js";
import { GoalEvaluation } from "./goals/evaluation.js";
import { GoalList } from "./goals/list.js";
import { ReviewQueue } from "./goals/queue.js";

export function GoalsPage({ route, meta }: PageProps) {
  const [, id, part, position] = route.segments;
  if (id === undefined) return html`<${GoalList} />`;
  if (part === undefined) return html`<${GoalEvaluation} key=${id} id=${id} route=${route} />`;
  if (part === "queue") {
    return html`<${ReviewQueue}
      key=${id}
      id=${id}
      route=${route}
      writable=${meta.store.writable}
      bundle=${isBundle() || meta.bundle}
    />`;
  }
  if (part === "conversations" && position !== undefined && /^\d+$/.test(position)) {
    return html`<${GoalConversation} key=${`${id}:${position}`} id=${id} position=${Number(position)} />`;
  }
  return html`<${ErrorLine} message=${`no such page: #${route.path}`} />`;
}
