/** htm bound to preact: templates without a JSX compiler. */
import htm from "htm";
import { h } from "preact";

export const html = htm.bind(h);
