// A page's title and its actions.
import type { ComponentChildren } from 'preact';

export function PageHeader(props: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page">
      <h1>{props.title}</h1>
      {props.children ? <div class="actions">{props.children}</div> : null}
    </header>
  );
}
