/**
 * Backend states the doctor finds (adapters/memory/diagnosis/), added to a data set as a failure
 * would leave them: a claim of a failed workload, a host whose plugin fails, a detach that never
 * ended, a volume in error, an attachment to a host that is gone. They are states, never problems:
 * the checks find them. The contract fixture makes each kind with it; a demo data set may too.
 */
import type { ProblemKind } from '../../contract/diagnosis';
import type { MemoryData, VolumeData } from './shape';

const GIB = 1024 ** 3;

/**
 * Adds volume `namespace/id` in the state that `kind`'s check finds, since `at` (RFC 3339), to
 * `data`. Every host it uses is declared in `hosts` (with the volume on its list), so the volume
 * shows no other kind's drift; `ATTACHMENT_DRIFT`'s host is the one left out.
 */
export function addCondition(data: MemoryData, kind: ProblemKind, namespace: string, id: string, at: string): void {
  const key = `${namespace}/${id}`;
  const host = `${id}-host`;
  const v: VolumeData = { namespace, id, name: id, sizeBytes: GIB, createdAt: at, updatedAt: at };
  const hosts = (data.hosts ??= []);
  const attached = { id: `${id}-att`, host, device: '/dev/vdb', attachedAt: at };
  switch (kind) {
    case 'STUCK_CLAIM':
      // The workload failed and was told to stop; its claim stayed.
      v.attachments = [{ ...attached, workload: `${id}-job` }];
      (data.workloads ??= []).push({ id: `${id}-job`, status: 'failed', desiredStatus: 'stop', updatedAt: at });
      hosts.push({ name: host, volumes: [key] });
      break;
    case 'CLAIM_ON_MISSING_PLUGIN':
      v.attachments = [attached];
      hosts.push({ name: host, volumes: [key], plugin: 'unhealthy' });
      break;
    case 'STUCK_TRANSITION':
      // A detach whose change never ended (a restart lost it).
      v.status = 'DETACHING';
      v.attachments = [{ ...attached, state: 'DETACHING' }];
      hosts.push({ name: host, volumes: [key] });
      break;
    case 'ERROR_STATE':
      v.status = 'ERROR';
      break;
    case 'ATTACHMENT_DRIFT':
      // Attached to a host the backend no longer knows.
      v.attachments = [attached];
      break;
  }
  data.volumes.push(v);
}
