import { applyPolicies, type PersonalDataSettings } from './personal-data.js';
import type { DiscoveredStream } from './discovery.js';
import type { SelectedStream } from './selection.js';

/** The personal_data policies applied to the streams discover offers and sync syncs. */
/** A discovered stream as the catalog shows it under the policies (discover's output). */
export function offeredWithPolicies(offered: DiscoveredStream, settings: PersonalDataSettings): DiscoveredStream {
  const effect = applyPolicies({ name: offered.descriptor.name, schema: offered.schema, keyProperties: offered.keyProperties, replicationKey: offered.replicationKey }, settings);
  return { ...offered, schema: effect.schema };
}

/** A selected stream under the policies: its schema, the values to replace, and dropped fields still counted as its own. */
export function selectedWithPolicies(selected: SelectedStream, settings: PersonalDataSettings): SelectedStream {
  const effect = applyPolicies({ name: selected.descriptor.name, schema: selected.schema, keyProperties: selected.keyProperties, replicationKey: selected.replicationKey }, settings);
  const named = Object.values(settings.personal_data).flatMap((policies) => Object.keys(policies ?? {}));
  return {
    ...selected,
    schema: effect.schema,
    personal: effect.values,
    declaredFields: new Set([...selected.declaredFields, ...effect.dropped, ...named]),
  };
}
