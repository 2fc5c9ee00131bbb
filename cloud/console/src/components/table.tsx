// A table that scrolls (or stacks into cards on a phone) and the footer of a paged list.
import type { ComponentChildren } from 'preact';
import type { usePages } from '../hooks.js';
import { t } from '../i18n.js';

/**
 * A table in its scrolling wrapper: `head` the column titles, the children its rows. `stacked`: on a
 * phone each row becomes a card whose cells are labelled by their `data-label` (nothing scrolls sideways).
 * The wrapper takes focus (axe's scrollable-region-focusable: a keyboard scrolls what it cannot click).
 */
export function Table(props: {
  id: string;
  head: readonly string[];
  stacked?: boolean;
  /** Names the scrolling region for screen readers (it takes focus, so the keyboard can scroll it). */
  label?: string;
  children: ComponentChildren;
}) {
  return (
    <div
      class={props.stacked ? 'table-wrap stacked' : 'table-wrap'}
      tabIndex={0}
      {...(props.label ? { role: 'region', 'aria-label': props.label } : {})}
    >
      <table id={props.id}>
        <thead>
          <tr>
            {props.head.map((title) => (
              <th key={title}>{title}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** "Nothing yet" under an empty list, and the button that reads the next page while there is one. */
export function PagesFooter(props: { pages: ReturnType<typeof usePages<unknown>> }) {
  const { pages } = props;
  return (
    <>
      {!pages.loading && pages.items.length === 0 ? <p class="muted">{t('none')}</p> : null}
      {pages.hasMore ? (
        <button
          type="button"
          class="outline"
          onClick={() => void pages.loadMore()}
          aria-busy={pages.more.busy}
        >
          {t('loadMore')}
        </button>
      ) : null}
    </>
  );
}
