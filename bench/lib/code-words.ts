/** The words synthetic code is named from: bench:graphs' graph and bench:analyzer's generated tree. */
export const CODE_VERBS =
  'get set create update delete find load save parse render build resolve compute validate merge apply handle fetch send read write open close start stop'.split(
    ' ',
  );
export const CODE_NOUNS =
  'user order invoice session token cache query schema table column index request response header payload message event queue worker job plan task memory graph node edge repo commit branch file path config option'.split(
    ' ',
  );
