/**
 * Fixed vocabularies for synthetic data. Many entries deliberately contain
 * non-ASCII letters and characters that force CSV quoting (comma, double quote,
 * line break), so that clients are exercised on them in a good share of rows.
 */

export const FIRST_NAMES: readonly string[] = [
  'Anna', 'Ben', 'Chloé', 'Dmitri', 'Émilie', 'Farah', 'Grzegorz', 'Hana', 'Ingrid', 'José',
  'Jürgen', 'Kofi', 'Łukasz', 'María', 'Nils', 'Oğuz', 'Priya', 'Quentin', 'Renée', 'Søren',
  'Tomás', 'Uma', 'Václav', 'Wei', 'Xóchitl', 'Yusuf', 'Zoë', '美咲', 'Ngọc', 'Sam',
];

export const LAST_NAMES: readonly string[] = [
  'Smith', 'Müller', 'García', 'Kowalski', 'Nguyễn', '小林', 'Østergaard', "O'Brien", 'Dubois', 'Rossi',
  'Smith, Jr.', 'Núñez', 'Björk', 'Papadopoulos', 'Çelik', 'Novák', 'Jones "JJ"', 'van der Berg', 'Żółć',
  'Svensson', 'Ivanova', 'Mbeki', 'Tanaka', 'Da Silva, Neto', 'Lee\nPark', 'Schröder', 'Khan', 'Ó Súilleabháin',
];

/** ASCII spellings used to build e-mail local parts. */
export function asciiFold(s: string): string {
  const folded = s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ł/g, 'l')
    .replace(/Ł/g, 'L')
    .replace(/ø/g, 'o')
    .replace(/Ø/g, 'O')
    .replace(/ı/g, 'i')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');
  return folded.length > 0 ? folded : 'user';
}

export const DEPARTMENTS: readonly string[] = [
  'Finance', 'Engineering', 'Sales', 'Human Resources', 'Legal', 'R&D', 'Support', 'Operations',
];

export interface ProgramSpec {
  readonly name: string;
  readonly modules: readonly string[];
}

export const PROGRAMS: readonly ProgramSpec[] = [
  {
    name: 'Security Basics, 2025 edition',
    modules: ['Passwords, passphrases and managers', 'Phishing 101', 'Safe browsing', 'Clean desk', 'Reporting incidents'],
  },
  {
    name: 'The "Human Firewall" Programme',
    modules: ['Social engineering', 'Spotting "urgent" requests', 'Vishing & smishing', 'Tailgating'],
  },
  {
    name: 'Datenschutz & Privacy',
    modules: ['GDPR für alle', 'Données personnelles', 'Retention, deletion\nand archiving', 'Privacy by design'],
  },
  {
    name: 'Secure Development',
    modules: ['OWASP Top 10', 'Secrets in code', 'Dependency hygiene', 'Threat modelling, step by step', 'Code review "do\'s and don\'ts"'],
  },
  {
    name: 'Remote Work\nSecurity',
    modules: ['Home Wi-Fi', 'Video calls', 'Travelling with devices', 'Public networks, hotspots'],
  },
  {
    name: 'Compliance Essentials',
    modules: ['Anti-bribery', 'Insider trading', 'Code of conduct', 'Acceptable use', 'Whistleblowing ("speak up")'],
  },
  {
    name: 'セキュリティ意識向上',
    modules: ['パスワード管理', 'フィッシング対策', 'Mobile devices', 'Ransomware: what now?'],
  },
];

export interface ModuleRef {
  readonly programIndex: number;
  readonly moduleIndex: number;
  readonly programId: string;
  readonly programName: string;
  readonly moduleId: string;
  readonly moduleName: string;
}

/** Every module of every program, flattened; a record's module is an index into this. */
export const MODULES: readonly ModuleRef[] = PROGRAMS.flatMap((program, p) =>
  program.modules.map((moduleName, m) => ({
    programIndex: p,
    moduleIndex: m,
    programId: `prog-${String(p + 1).padStart(2, '0')}`,
    programName: program.name,
    moduleId: `mod-${String(p + 1).padStart(2, '0')}-${String(m + 1).padStart(2, '0')}`,
    moduleName,
  })),
);

export const CAMPAIGN_THEMES: readonly string[] = [
  'Quarterly payroll check',
  'Parcel delivery, failed',
  'CEO "urgent" wire transfer',
  'IT password expiry',
  'Shared document: Q3 results',
  'Benefits enrolment\nreminder',
  'Rechnung Nr. 4711',
  'Conference invitation',
  'Voicemail received',
  'Gift card, from HR',
  'Multi-factor re-enrolment',
  '年末調整のお知らせ',
];

export const TEMPLATES: readonly string[] = [
  'Invoice "overdue"',
  'DHL – Zustellung fehlgeschlagen',
  'Microsoft 365 login, expired',
  'Zoom meeting\nrecording',
  'HR policy update',
  'Dropbox share',
  'Amazon order #113-4421',
  'Payroll "adjustment"',
  'Facture en pièce jointe',
  'Teams message',
];

export const GROUP_COUNT = 25;
