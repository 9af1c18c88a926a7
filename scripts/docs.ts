/** Regenerates docs/profiles.md and docs/errors.md from the code. */
import { writeFileSync } from 'node:fs';
import { renderProfilesDoc } from '../src/catalogue/profiles-doc.js';
import { renderErrorsDoc } from '../src/errors/errors-doc.js';

writeFileSync('docs/profiles.md', renderProfilesDoc());
writeFileSync('docs/errors.md', renderErrorsDoc());
process.stdout.write('wrote docs/profiles.md and docs/errors.md\n');
