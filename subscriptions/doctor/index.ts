/** The volume doctor (docs/doctor.md). */
export { VolumeDoctor, DOCTOR_DEFAULTS, type DoctorOptions, type DoctorSettings, type ProblemStore } from './doctor';
export type { DoctorState, PassStats, ProblemChange } from './backend-doctor';
export { problemChangeInput } from './problem-events';
