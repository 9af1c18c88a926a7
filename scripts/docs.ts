/** Regenerates docs/profiles.md and docs/errors.md from the code. */
import { writeFileSync } from 'node:fs';
import { renderProfilesDoc } from '../src/catalogue/profiles-doc.js';
import { renderErrorsDoc } from '../src/errors/errors-doc.js';
import { renderObservabilityDoc } from '../src/observability/observability-doc.js';

writeFileSync('docs/profiles.md', renderProfilesDoc());
writeFileSync('docs/errors.md', renderErrorsDoc());
writeFileSync('docs/observability.md', renderObservabilityDoc());
process.stdout.write('wrote docs/profiles.md docs/errors.md and docs/observability.md\n');
