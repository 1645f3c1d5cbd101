import { loadSync, type PackageDefinition } from '@grpc/proto-loader';

/** The parts of a protobuf DescriptorProto that proto-loader exposes and the comparison reads. */
interface FieldDescriptor {
  name: string;
  number: number;
  label: string;
  type: string;
  typeName: string;
}

interface MessageDescriptor {
  name: string;
  field: FieldDescriptor[];
  nestedType: MessageDescriptor[];
  options: { mapEntry?: boolean } | null;
}

interface EnumDescriptor {
  value: { name: string; number: number }[];
}

interface MethodDescriptor {
  requestStream: boolean;
  responseStream: boolean;
  requestType: { type: MessageDescriptor };
  responseType: { type: MessageDescriptor };
}

const PACKAGE = 'runtime.v1.';

/**
 * Compares ebb's CRI proto files with the published definition. For every message of ebb's files the
 * published one must exist with each of its fields under the same name, number, type and label (map fields
 * by key and value types); for every rpc, the published service must have it with the same request and
 * response messages and streaming. Published fields ebb leaves out are fine (the decoder skips them).
 * Returns one line per difference; none means wire compatible.
 */
export function compareProtos(ours: readonly string[], upstream: string): string[] {
  const mine = load([...ours]);
  const theirs = load([upstream]);
  const problems: string[] = [];
  for (const [name, def] of Object.entries(mine)) {
    const other = theirs[name];
    const kind = kindOf(def);
    if (!other || kindOf(other) !== kind) {
      problems.push(`${kind} ${name}: not in the published definition`);
    } else if (kind === 'message') {
      problems.push(...compareMessage(name, descriptorOf<MessageDescriptor>(def), descriptorOf<MessageDescriptor>(other)));
    } else if (kind === 'enum') {
      problems.push(...compareEnum(name, descriptorOf<EnumDescriptor>(def), descriptorOf<EnumDescriptor>(other)));
    } else {
      problems.push(...compareService(name, def as Record<string, MethodDescriptor>, other as Record<string, MethodDescriptor>));
    }
  }
  return problems;
}

function compareEnum(name: string, mine: EnumDescriptor, theirs: EnumDescriptor): string[] {
  const published = new Map(theirs.value.map((v) => [v.name, v.number]));
  return mine.value
    .filter((v) => published.get(v.name) !== v.number)
    .map((v) => `${name}.${v.name}: ebb declares = ${v.number}, published is ${published.get(v.name) ?? 'absent'}`);
}

function compareMessage(name: string, mine: MessageDescriptor, theirs: MessageDescriptor): string[] {
  const problems: string[] = [];
  const published = new Map(theirs.field.map((f) => [f.name, f]));
  for (const f of mine.field) {
    const p = published.get(f.name);
    const ours = describeField(mine, f);
    if (!p) {
      const byNumber = theirs.field.find((x) => x.number === f.number);
      const hint = byNumber ? `; number ${f.number} is ${describeField(theirs, byNumber)}` : '';
      problems.push(`${name}.${f.name}: ebb declares ${ours}, the published message has no such field${hint}`);
      continue;
    }
    const upstream = describeField(theirs, p);
    if (ours !== upstream) problems.push(`${name}.${f.name}: ebb declares ${ours}, published is ${upstream}`);
  }
  return problems;
}

function compareService(name: string, mine: Record<string, MethodDescriptor>, theirs: Record<string, MethodDescriptor>): string[] {
  const problems: string[] = [];
  for (const [method, m] of Object.entries(mine)) {
    const p = theirs[method];
    if (!p) {
      problems.push(`${name}.${method}: not in the published service`);
      continue;
    }
    const ours = describeMethod(m);
    const upstream = describeMethod(p);
    if (ours !== upstream) problems.push(`${name}.${method}: ebb declares ${ours}, published is ${upstream}`);
  }
  return problems;
}

/** e.g. `= 4 optional uint64`, `= 2 repeated runtime.v1.Image`, `= 2 map<string, string>`. */
function describeField(owner: MessageDescriptor, f: FieldDescriptor): string {
  const entry = owner.nestedType.find((t) => t.options?.mapEntry && t.name === f.typeName);
  if (entry && f.label === 'LABEL_REPEATED') {
    const [key, value] = [entry.field.find((x) => x.number === 1), entry.field.find((x) => x.number === 2)];
    if (key && value) return `= ${f.number} map<${typeOf(key)}, ${typeOf(value)}>`;
  }
  return `= ${f.number} ${f.label.replace('LABEL_', '').toLowerCase()} ${typeOf(f)}`;
}

function typeOf(f: FieldDescriptor): string {
  if (f.type === 'TYPE_MESSAGE' || f.type === 'TYPE_ENUM') return qualified(f.typeName);
  return f.type.replace('TYPE_', '').toLowerCase();
}

function describeMethod(m: MethodDescriptor): string {
  const stream = (s: boolean): string => (s ? 'stream ' : '');
  return `(${stream(m.requestStream)}${qualified(m.requestType.type.name)}) returns (${stream(m.responseStream)}${qualified(m.responseType.type.name)})`;
}

/** Type names as written in the file, made absolute within the one package both files declare. */
function qualified(typeName: string): string {
  const bare = typeName.replace(/^\./, '');
  return bare.startsWith(PACKAGE) ? bare : `${PACKAGE}${bare}`;
}

type Definition = PackageDefinition[string];

function kindOf(def: Definition): 'message' | 'enum' | 'service' {
  if (!('format' in def) || typeof def.format !== 'string') return 'service';
  return def.format.endsWith('EnumDescriptorProto') ? 'enum' : 'message';
}

function descriptorOf<T>(def: Definition): T {
  return (def as { type: T }).type;
}

function load(files: string[]): PackageDefinition {
  return loadSync(files, { keepCase: true });
}
