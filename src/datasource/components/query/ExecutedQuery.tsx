import React from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2, PanelData } from '@grafana/data';
import { t } from '@grafana/i18n';
import { useStyles2 } from '@grafana/ui';
import { testIds } from '../../../components/testIds';

/** executedQuery finds the PromQL the backend ran for this query, if it says so in the frames' meta. */
export function executedQuery(data: PanelData | undefined, refId: string): string | undefined {
  const frames = data?.series ?? [];
  const frame =
    frames.find((f) => f.refId === refId && f.meta?.executedQueryString) ??
    frames.find((f) => f.meta?.executedQueryString);
  return frame?.meta?.executedQueryString;
}

/** ExecutedQuery shows, under the editor, the PromQL that Prometheus mode ran for this query. */
export function ExecutedQuery({ data, refId }: { data?: PanelData; refId: string }) {
  const styles = useStyles2(getStyles);
  const text = executedQuery(data, refId);
  if (!text) {
    return null;
  }
  return (
    <div className={styles.box} data-testid={testIds.queryEditor.executedQuery}>
      <div className={styles.label}>{t('executed-query.label', 'PromQL run by Prometheus mode')}</div>
      <pre className={styles.pre}>{text}</pre>
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  box: css({ marginTop: theme.spacing(1) }),
  label: css({ color: theme.colors.text.secondary, fontSize: theme.typography.bodySmall.fontSize }),
  pre: css({
    whiteSpace: 'pre-wrap',
    wordBreak: 'break-all',
    margin: 0,
    fontSize: theme.typography.bodySmall.fontSize,
  }),
});
