import React, { useEffect, useState } from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { getBackendSrv } from '@grafana/runtime';
import { Button, Field, Stack, Text } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { errorMessage } from '../../hooks/useResource';
import { EndpointStatus as Status } from '../../types';
import { describeDetection } from './EndpointList';

/**
 * EndpointStatus shows the saved data source's per-endpoint health (up or the exact error, flavor, ranks) from the
 * endpoints resource; it reloads after every "Save & test" (the settings version changes).
 */
export function EndpointStatus({ uid, version }: { uid: string; version?: number }) {
  const [statuses, setStatuses] = useState<Status[]>();
  const [error, setError] = useState<string>();
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    let cancelled = false;
    getBackendSrv()
      .get<Status[]>(`/api/datasources/uid/${uid}/resources/endpoints`, undefined, undefined, { showErrorAlert: false })
      .then((res) => {
        if (!cancelled) {
          setStatuses(res);
          setError(undefined);
        }
      })
      .catch((err: unknown) => !cancelled && setError(errorMessage(err)));
    return () => {
      cancelled = true;
    };
  }, [uid, version, refresh]);

  return (
    <Field
      label={t('endpoint-status.endpoint-health.label', 'Endpoint health')}
      description={t(
        'endpoint-status.last-scrape-of-each-saved.description',
        'Last scrape of each saved endpoint. Save & test scrapes them all again.'
      )}
    >
      <Stack direction="column" gap={0.5}>
        <div data-testid={testIds.configEditor.endpointStatus} aria-live="polite">
          {error && (
            <Text color="secondary">
              {tf('endpoint-status.not-saved', 'Health is shown once the settings are saved ({{error}}).', { error })}
            </Text>
          )}
          {statuses?.length === 0 && (
            <Text color="secondary">{t('endpoint-status.no-endpoints', 'No endpoints saved yet.')}</Text>
          )}
          {statuses?.map((s) => (
            <div key={s.name}>
              <Text color={s.gone ? 'secondary' : s.up === false ? 'error' : s.up ? 'success' : 'secondary'}>
                {s.name}:{' '}
                {s.gone
                  ? tf('endpoint-status.gone', 'gone from {{source}} — history kept, not scraped', { source: s.source })
                  : s.up === undefined
                    ? s.url
                    : s.up
                      ? tf('endpoint-status.up', 'up — {{detection}}', { detection: describeDetection(s.detection) })
                      : tf('endpoint-status.down', 'down — {{error}}', {
                          error: s.error ?? t('endpoint-status.not-scraped-yet', 'not scraped yet'),
                        })}
                {!s.gone &&
                  s.source &&
                  tf('endpoint-status.discovered', ' (found by {{source}}{{role}})', {
                    source: s.source,
                    role: s.role ? tf('endpoint-status.role', ', role {{role}} from its label', { role: s.role }) : '',
                  })}
              </Text>
            </div>
          ))}
        </div>
        <div>
          <Button size="sm" variant="secondary" icon="sync" onClick={() => setRefresh((n) => n + 1)}>
            {t('endpoint-status.refresh', 'Refresh')}
          </Button>
        </div>
      </Stack>
    </Field>
  );
}
