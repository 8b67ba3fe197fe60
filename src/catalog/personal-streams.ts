import { applyPolicies, checkPolicyNames, hasPolicies, type PersonalDataSettings, type PolicyTarget } from './personal-data.js';
import { REPORTS, type StreamDescriptor } from './reports.js';
import type { DiscoveredStream } from './discovery.js';
import type { SelectedStream } from './selection.js';

/**
 * The personal_data policies applied to the streams discover offers and to
 * those a run syncs, after checking that every name in them is a field.
 * Without policies the streams are returned as they are.
 */

function targetOf(stream: DiscoveredStream | SelectedStream): PolicyTarget {
  const declaredFields = 'declaredFields' in stream ? { declaredFields: stream.declaredFields } : {};
  return { name: stream.descriptor.name, schema: stream.schema, keyProperties: stream.keyProperties, replicationKey: stream.replicationKey, ...declaredFields };
}

/** The discovered streams as the catalog shows them under the policies (discover's output). */
export function offeredUnderPolicies(streams: readonly DiscoveredStream[], settings: PersonalDataSettings, reports: readonly StreamDescriptor[] = REPORTS): DiscoveredStream[] {
  if (!hasPolicies(settings)) return [...streams];
  checkPolicyNames(streams.map(targetOf), settings, reports);
  return streams.map((offered) => ({ ...offered, schema: applyPolicies(targetOf(offered), settings).schema }));
}

/** The selected streams under the policies: their schemas, the values to replace, and dropped fields still counted as their own. */
export function selectedUnderPolicies(streams: readonly SelectedStream[], settings: PersonalDataSettings): SelectedStream[] {
  if (!hasPolicies(settings)) return [...streams];
  checkPolicyNames(streams.map(targetOf), settings, REPORTS, true);
  const named = settings.personal_data.map((rule) => rule.field);
  return streams.map((selected) => {
    const effect = applyPolicies(targetOf(selected), settings);
    return { ...selected, schema: effect.schema, personal: effect.values, declaredFields: new Set([...selected.declaredFields, ...effect.dropped, ...named]) };
  });
}
