/**
 * Addresses of simulated nodes and pods. Nothing is routed: these are unique strings for status fields.
 * Node i has InternalIP 127.0.<1 + i/254>.<1 + i%254> and pod CIDR 10.<244 + i/256>.<i%256>.0/24 (the
 * flannel-style layout kind uses); a node's pod IPs are reused after the pod is gone, as with host-local IPAM.
 */
import { randomBytes } from 'node:crypto';

/** Node indexes this layout can address (12 × 256 /24 pod networks). */
export const MAX_NODES = 12 * 256;

export function nodeInternalIP(index: number): string {
  checkIndex(index);
  return `127.0.${1 + Math.floor(index / 254)}.${1 + (index % 254)}`;
}

export function podCIDR(index: number): string {
  checkIndex(index);
  return `10.${244 + Math.floor(index / 256)}.${index % 256}.0/24`;
}

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_NODES) throw new Error(`node index ${index} is outside 0..${MAX_NODES - 1}`);
}

/** Pod IPs of one node: .1 is the gateway, .2–.254 go to pods, lowest free first. */
export class PodIPPool {
  private readonly prefix: string;
  private readonly byPod = new Map<string, number>();
  private readonly used = new Set<number>();

  constructor(index: number) {
    this.prefix = podCIDR(index).replace(/\.0\/24$/, '');
  }

  /** The pod's IP, allocating one on first use. Throws when the /24 is exhausted. */
  allocate(podUid: string): string {
    const have = this.byPod.get(podUid);
    if (have !== undefined) return `${this.prefix}.${have}`;
    for (let host = 2; host <= 254; host++) {
      if (!this.used.has(host)) {
        this.used.add(host);
        this.byPod.set(podUid, host);
        return `${this.prefix}.${host}`;
      }
    }
    throw new Error(`pod CIDR ${this.prefix}.0/24 is exhausted`);
  }

  /** Keeps an IP a pod already has (a pod adopted after a restart of the simulated node). */
  reserve(podUid: string, ip: string): void {
    if (!ip.startsWith(`${this.prefix}.`)) return;
    const host = Number(ip.slice(this.prefix.length + 1));
    if (Number.isInteger(host) && !this.used.has(host)) {
      this.used.add(host);
      this.byPod.set(podUid, host);
    }
  }

  release(podUid: string): void {
    const host = this.byPod.get(podUid);
    if (host === undefined) return;
    this.byPod.delete(podUid);
    this.used.delete(host);
  }

  get size(): number {
    return this.used.size;
  }
}

/** A containerd-style container ID (`containerd://<64 hex>`). */
export function newContainerId(): string {
  return `containerd://${randomBytes(32).toString('hex')}`;
}
