/**
 * A small classic-BPF interpreter over `struct seccomp_data`, for tests: the instructions seccomp
 * accepts (`seccomp_check_filter`), checked the way the kernel checks a program before loading it.
 * Independent of the compiler on purpose: it decodes raw bytes and knows nothing of the policy.
 */

/** The input of a seccomp filter. */
export interface SeccompData {
  readonly nr: number;
  readonly arch: number;
  readonly instructionPointer: bigint;
  /** Six 64-bit arguments. */
  readonly args: readonly bigint[];
}

/** One decoded `struct sock_filter`. */
export interface BpfInstruction {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

const SECCOMP_DATA_SIZE = 64;
const MAX_INSTRUCTIONS = 4096;
const MEMORY_WORDS = 16;

/** Decodes a raw program (8 bytes an instruction, little-endian). */
export function decodeProgram(raw: Buffer): BpfInstruction[] {
  if (raw.length % 8 !== 0) throw new Error('a program is a whole number of 8-byte instructions');
  const program: BpfInstruction[] = [];
  for (let at = 0; at < raw.length; at += 8) {
    program.push({
      code: raw.readUInt16LE(at),
      jt: raw.readUInt8(at + 2),
      jf: raw.readUInt8(at + 3),
      k: raw.readUInt32LE(at + 4),
    });
  }
  return program;
}

/** The 64 bytes the kernel hands a filter: nr, arch, instruction_pointer, args (low word first). */
export function seccompDataBytes(data: SeccompData): Buffer {
  const bytes = Buffer.alloc(SECCOMP_DATA_SIZE);
  bytes.writeUInt32LE(data.nr >>> 0, 0);
  bytes.writeUInt32LE(data.arch >>> 0, 4);
  bytes.writeBigUInt64LE(BigInt.asUintN(64, data.instructionPointer), 8);
  for (let i = 0; i < 6; i++) bytes.writeBigUInt64LE(BigInt.asUintN(64, data.args[i] ?? 0n), 16 + 8 * i);
  return bytes;
}

const CLASS = { LD: 0x00, LDX: 0x01, ST: 0x02, STX: 0x03, ALU: 0x04, JMP: 0x05, RET: 0x06, MISC: 0x07 };
const SRC_X = 0x08;
const JUMPS: Readonly<Record<number, (a: number, b: number) => boolean>> = {
  0x10: (a, b) => a === b,
  0x20: (a, b) => a > b,
  0x30: (a, b) => a >= b,
  0x40: (a, b) => (a & b) !== 0,
};
const ALU: Readonly<Record<number, (a: number, b: number) => number>> = {
  0x00: (a, b) => a + b,
  0x10: (a, b) => a - b,
  0x20: (a, b) => Math.imul(a, b),
  0x30: (a, b) => Math.floor(a / b),
  0x40: (a, b) => a | b,
  0x50: (a, b) => a & b,
  0x60: (a, b) => (b >= 32 ? 0 : a << b),
  0x70: (a, b) => (b >= 32 ? 0 : a >>> b),
  0x80: (a) => -a,
  0x90: (a, b) => a % b,
  0xa0: (a, b) => a ^ b,
};

/** Why the kernel would refuse `program`, or undefined when it would load it. */
export function programProblem(program: readonly BpfInstruction[]): string | undefined {
  if (program.length === 0 || program.length > MAX_INSTRUCTIONS) return `length ${String(program.length)}`;
  for (const [pc, { code, jt, jf, k }] of program.entries()) {
    const cls = code & 0x07;
    const at = `instruction ${String(pc)} (code 0x${code.toString(16)})`;
    if (code === 0x20) {
      if (k % 4 !== 0 || k >= SECCOMP_DATA_SIZE) return `${at}: load outside seccomp_data`;
    } else if (code === 0x80 || code === 0x81 || code === 0x00 || code === 0x01 || code === 0x87) {
      // LD/LDX W LEN, LD/LDX IMM, TXA (0x87)
    } else if (code === 0x07) {
      // TAX
    } else if (code === 0x60 || code === 0x61 || code === 0x02 || code === 0x03) {
      if (k >= MEMORY_WORDS) return `${at}: scratch memory index`;
    } else if (cls === CLASS.ALU) {
      const op = code & 0xf0;
      if (ALU[op] === undefined || (code & ~0xf8) !== CLASS.ALU) return `${at}: unknown ALU op`;
      if ((op === 0x30 || op === 0x90) && (code & SRC_X) === 0 && k === 0) return `${at}: division by zero`;
    } else if (cls === CLASS.JMP) {
      const op = code & 0xf0;
      if ((code & ~0xf8) !== CLASS.JMP) return `${at}: unknown jump`;
      if (op === 0x00) {
        if (code !== 0x05 || pc + 1 + k >= program.length) return `${at}: ja out of range`;
      } else {
        if (JUMPS[op] === undefined) return `${at}: unknown jump`;
        if (pc + 1 + Math.max(jt, jf) >= program.length) return `${at}: jump out of range`;
      }
    } else if (code !== 0x06 && code !== 0x16) {
      return `${at}: not allowed in a seccomp filter`;
    }
  }
  const last = program.at(-1)?.code;
  if (last !== 0x06 && last !== 0x16) return 'the last instruction is not a return';
  return undefined;
}

/** Runs `program` on `data` and returns the filter's 32-bit return value; throws on a bad program. */
export function runSeccompFilter(program: readonly BpfInstruction[], data: SeccompData): number {
  const problem = programProblem(program);
  if (problem !== undefined) throw new Error(`bad program: ${problem}`);
  const input = seccompDataBytes(data);
  const memory = new Array<number>(MEMORY_WORDS).fill(0);
  let a = 0;
  let x = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc] as BpfInstruction;
    const cls = code & 0x07;
    const operand = (code & SRC_X) !== 0 ? x : k;
    switch (cls) {
      case CLASS.LD:
        a =
          code === 0x20
            ? input.readUInt32LE(k)
            : code === 0x80
              ? SECCOMP_DATA_SIZE
              : code === 0x60
                ? (memory[k] ?? 0)
                : k;
        break;
      case CLASS.LDX:
        x = code === 0x81 ? SECCOMP_DATA_SIZE : code === 0x61 ? (memory[k] ?? 0) : k;
        break;
      case CLASS.ST:
        memory[k] = a;
        break;
      case CLASS.STX:
        memory[k] = x;
        break;
      case CLASS.ALU: {
        const op = code & 0xf0;
        // Classic BPF ends the program with 0 on a division by a zero X.
        if ((op === 0x30 || op === 0x90) && operand === 0) return 0;
        a = (ALU[op] as (a: number, b: number) => number)(a, operand) >>> 0;
        break;
      }
      case CLASS.JMP:
        if ((code & 0xf0) === 0x00) pc += k;
        else pc += (JUMPS[code & 0xf0] as (a: number, b: number) => boolean)(a, operand >>> 0) ? jt : jf;
        break;
      case CLASS.RET:
        return (code === 0x16 ? a : k) >>> 0;
      default:
        if (code === 0x07) x = a;
        else a = x;
    }
  }
  throw new Error('fell off the end of the program');
}
