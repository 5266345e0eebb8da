import React from 'react';
import { t } from '@grafana/i18n';
import { localized } from '../../localized';
import { RadioButtonGroup } from '@grafana/ui';
import { EditorRow } from '@grafana/plugin-ui';
import { testIds } from '../../../components/testIds';
import type { DataSource } from '../../datasource';
import { GROUP_BY, GroupBy, VllmQuery } from '../../types';
import { QueryErrors } from '../../validation';
import { BucketsField } from './BucketsField';
import { LimitField } from './LimitField';
import { MatcherPicker } from './MatcherPicker';
import { QueryField } from './QueryField';

interface Props {
  datasource: DataSource;
  query: VllmQuery;
  errors: QueryErrors;
  /** groupings are the groupBy values the query's measures answer; none hides the grouping. */
  groupings: GroupBy[];
  /** ranked shows the limit and rank of the series kept, for queries that return series. */
  ranked: boolean;
  onChange: (patch: Partial<VllmQuery>) => void;
}

/**
 * FiltersSection picks which endpoints, models, engines / DP ranks and prefill/decode roles a query reads, and how
 * series are grouped.
 */
export function FiltersSection({ datasource, query, errors, groupings: allowed, ranked, onChange }: Props) {
  const groupBy = query.groupBy ?? 'engine';
  const groupings = localized(
    'group-by',
    GROUP_BY.filter((g) => allowed.includes(g.value))
  );
  return (
    <EditorRow>
      <MatcherPicker
        datasource={datasource}
        resource="endpoints"
        label={t('filters-section.endpoint.label', 'Endpoint')}
        description={t(
          'filters-section.endpoint-names-regex-empty-all.description',
          'Endpoint names; regex, empty = all.'
        )}
        value={query.endpoint}
        invalid={errors.endpoint}
        testId={testIds.queryEditor.endpoint}
        onChange={(endpoint) => onChange({ endpoint })}
      />
      <MatcherPicker
        datasource={datasource}
        resource="models"
        label={t('filters-section.model.label', 'Model')}
        description={t(
          'filters-section.model-name-values-regex-empty.description',
          'model_name values; regex, empty = all.'
        )}
        value={query.model}
        invalid={errors.model}
        testId={testIds.queryEditor.model}
        onChange={(model) => onChange({ model })}
      />
      <MatcherPicker
        datasource={datasource}
        resource="engines"
        label={t('filters-section.engine-dp-rank.label', 'Engine / DP rank')}
        description={t(
          'filters-section.engine-dp-or-dp-rank.description',
          'engine, dp or dp_rank values; regex, empty = all.'
        )}
        value={query.engine}
        invalid={errors.engine}
        testId={testIds.queryEditor.engine}
        width={20}
        onChange={(engine) => onChange({ engine })}
      />
      <MatcherPicker
        datasource={datasource}
        resource="roles"
        label={t('filters-section.role.label', 'Role')}
        description={t(
          'filters-section.role.description',
          'Prefill/decode role of the endpoint (prefill, decode, both, unified); regex, empty = any, without a role label.'
        )}
        value={query.role}
        invalid={errors.role}
        testId={testIds.queryEditor.role}
        width={20}
        onChange={(role) => onChange({ role })}
      />
      {groupings.length > 0 && (
        <QueryField
          label={t('filters-section.group-by.label', 'Group by')}
          description={groupings.find((g) => g.value === groupBy)?.description}
        >
          <div data-testid={testIds.queryEditor.groupBy}>
            <RadioButtonGroup<GroupBy>
              options={groupings}
              value={groupBy}
              onChange={(v) => onChange({ groupBy: v === 'engine' ? undefined : v })}
            />
          </div>
        </QueryField>
      )}
      {ranked && <LimitField limit={query.limit} rank={query.rank} invalid={errors.limit} onChange={onChange} />}
      {ranked && (
        <BucketsField value={query.buckets} invalid={errors.buckets} onChange={(buckets) => onChange({ buckets })} />
      )}
    </EditorRow>
  );
}
