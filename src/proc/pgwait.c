// SPDX-License-Identifier: BSD-2-Clause
/* pgwait: PostgreSQL's wait events (the contract: pgwait.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/pgwait.h"

static const char *const classes[] = {
	[0x01] = "LWLock", [0x03] = "Lock",	[0x04] = "BufferPin", [0x05] = "Activity",
	[0x06] = "Client", [0x07] = "Extension", [0x08] = "IPC",      [0x09] = "Timeout",
	[0x0A] = "IO",
};

/*
 * PostgreSQL 15's events by id, sorted: each name is wait_event.h's enum
 * name in pg_stat_activity's spelling, checked against the strings of
 * Debian 12's postgres 15 binary (which holds every one).  Other versions
 * number their events differently (17 generates them from
 * wait_event_names.txt): their ids stay numeric until a table is added.
 */
static const struct pgwait_name {
	uint32_t id;
	const char *name;
} pg15[] = {
	{0x04000000, "BufferPin"},	/* wait_event.c's own: no enum in 15 */
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

/* Lock's events are the lock tag's type (LockTagTypeNames, 15). */
static const char *const pg15_locks[] = {
	"relation", "extend", "frozenid", "page", "tuple", "transactionid",
	"virtualxid", "spectoken", "object", "userlock", "advisory",
};

static int cmp_id(const void *key, const void *elem)
{
	uint32_t k = *(const uint32_t *)key, e = ((const struct pgwait_name *)elem)->id;

	return k < e ? -1 : k > e;
}

void pgwait__format(uint32_t id, uint32_t major, char *buf, size_t len)
{
	uint32_t cls = id >> 24, ev = id & 0xffff;
	const char *type = cls < sizeof(classes) / sizeof(classes[0]) ? classes[cls] : NULL;
	const struct pgwait_name *n = NULL;

	if (!type) {
		snprintf(buf, len, "0x%08" PRIX32, id);
		return;
	}
	if (major == 15 && cls == 0x03 && ev < sizeof(pg15_locks) / sizeof(pg15_locks[0])) {
		snprintf(buf, len, "%s:%s", type, pg15_locks[ev]);
		return;
	}
	if (major == 15)
		n = bsearch(&id, pg15, sizeof(pg15) / sizeof(pg15[0]), sizeof(pg15[0]), cmp_id);
	if (n)
		snprintf(buf, len, "%s:%s", type, n->name);
	else
		snprintf(buf, len, "%s:0x%08" PRIX32, type, id);
}

/* The major version in an executable's path: /usr/lib/postgresql/NN/bin/. */
static uint32_t path_major(const char *path)
{
	const char *p = strstr(path, "/postgresql/");
	char *end;
	long v;

	if (!p)
		return 0;
	v = strtol(p + 12, &end, 10);
	return *end == '/' && v >= 9 && v < 100 ? (uint32_t)v : 0;
}

/* st_value of the dynamic symbol my_wait_event_info, and the virtual
 * address of the segment at file offset 0 (what the load bias is from). */
static int find_symbol(int fd, uint64_t *value, uint64_t *base)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t nph = 0;
	int err = -ENOENT;
	bool have_base = false;

	if (!e || elf_kind(e) != ELF_K_ELF)
		goto cleanup;
	if (elf_getphdrnum(e, &nph))
		goto cleanup;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*base = ph.p_vaddr;
			have_base = true;
			break;
		}
	}
	while (have_base && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
			    sym.st_shndx == SHN_UNDEF || sym.st_size != 8)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "my_wait_event_info")) {
				*value = sym.st_value;
				err = 0;
				goto cleanup;
			}
		}
	}
cleanup:
	if (e)
		elf_end(e);
	return err;
}

/* Where pid's executable (its device and inode) is mapped at file offset 0. */
static int load_start(const char *proc_root, int pid, dev_t dev, ino_t ino, uint64_t *start)
{
	char path[PATH_MAX], line[PATH_MAX + 128];
	unsigned long long lo, hi, off, inode;
	unsigned maj, min;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu", &lo, &hi, &off, &maj, &min,
			   &inode) != 6)
			continue;
		if (off == 0 && inode == (unsigned long long)ino &&
		    makedev(maj, min) == dev) {
			*start = lo;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int pgwait__info_addr(const char *proc_root, int pid, uint64_t *addr, uint32_t *major)
{
	char path[PATH_MAX], target[PATH_MAX];
	uint64_t value = 0, base = 0, start = 0;
	struct stat st;
	ssize_t n;
	int fd, err;

	*major = 0;
	if (pid <= 0 || snprintf(path, sizeof(path), "%s/%d/exe", proc_root, pid) >=
				(int)sizeof(path))
		return -EINVAL;
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		*major = path_major(target);
	}
	/* The running file itself, not whatever the path names now. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = -EINVAL;
		goto cleanup;
	}
	err = find_symbol(fd, &value, &base);
	err = err ?: load_start(proc_root, pid, st.st_dev, st.st_ino, &start);
	if (!err)
		*addr = value - base + start;
cleanup:
	close(fd);
	return err;
}
