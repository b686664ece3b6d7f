#!/usr/bin/env bash
# A throwaway single-node SLURM cluster for the integration test (Debian/Ubuntu, root,
# no systemd). Usage: cluster.sh pkgs|up|down|status
#   pkgs  install slurmctld, slurmd, slurm-client and munge from the distribution
#   up    start munge, slurmctld and slurmd with a minimal config (partition "debug")
#   down  cancel all jobs and stop the daemons by the PIDs in their pid files
# Facts it relies on: slurm.conf must be at /etc/slurm/slurm.conf (the jobstep plugin
# drops SLURM_CONF before its inner srun); without slurmdbd the status command must
# be squeue (sacct needs accounting); no cgroups (proctrack/linuxproc, task/none).
set -euo pipefail
DIR=${SLURM_TEST_DIR:-/tmp/credit-assign-slurm}
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) - 1024 ))

wait_for() {  # wait_for "command" [tries]: poll every 0.25 s
  for _ in $(seq 1 "${2:-120}"); do eval "$1" >/dev/null 2>&1 && return 0; sleep 0.25; done
  echo "cluster.sh: timed out waiting for: $1" >&2
  return 1
}

pkgs() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
}

up() {
  mkdir -p "$DIR"/{state,spool,log,run} /etc/slurm
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --force
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  wait_for "munge -n | unmunge"
  cat >/etc/slurm/slurm.conf <<CONF
ClusterName=credit-assign-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
MinJobAge=300
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
  slurmctld
  slurmd
  wait_for "sinfo -h -o %t | grep -qx idle"
  sinfo
}

down() {
  scancel --user=root 2>/dev/null || true
  for f in "$DIR/run/slurmd.pid" "$DIR/run/slurmctld.pid" /run/munge/munged.pid; do
    if [ -s "$f" ]; then kill "$(cat "$f")" 2>/dev/null || true; fi
  done
  sleep 1
  rm -rf "$DIR" /etc/slurm/slurm.conf
}

status() { sinfo && squeue; }

"$@"
