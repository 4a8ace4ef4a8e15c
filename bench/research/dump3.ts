import { build, V3 } from './v3.ts';
process.stdout.write(build(V3[process.argv[2]] ?? JSON.parse(process.argv[2])));
