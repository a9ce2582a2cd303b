#!/usr/bin/env bash
# watchdog.sh <command> [args...]   (file descriptor 3: a pipe whose other end the parent holds)
# Runs a command and kills it when the parent process disappears, so a test runner that is
# SIGKILLed or crashes never leaves etcd, kube-apiserver or moto running. Started as a process
# group of its own (as test/support/process.ts starts it), it stops the whole group when the
# parent is gone: the command and whatever the command started. It exits with the command's
# status as soon as the command ends.
#
# Callers signal the process group, which reaches the command itself; the watchdog ignores
# SIGTERM, SIGINT and SIGHUP rather than pass them on. (Passing them on gave the command each
# signal twice, and an operator takes a second SIGTERM as "exit at once": 3 of 8 stops skipped
# the graceful shutdown so.)
#
# The parent's end is noticed without polling: a `cat` reads descriptor 3 and gets end of file
# when the parent's end closes, which the kernel does however the parent ends. The watchdog sleeps
# in `wait -n` until that cat or the command ends. (Checking the parent every half second cost a
# `sleep` process each time: 0.3 CPU-s a minute per watchdog, tens of CPU-s in a test run.)
set -u
if ! { true <&3; } 2>/dev/null; then
  echo "watchdog.sh: descriptor 3 must be a pipe from the parent process" >&2
  exit 2
fi
# The shell's own messages (such as the "Killed" line bash prints when it reaps the reader below)
# are not the command's output: they go nowhere, the command's stderr where it was.
exec 4>&2 2>/dev/null
# The watchdog, and the reader it starts, ignore what the group is sent to stop the command: the
# reader ends only at the end of file (or a SIGKILL of the whole group, which ends the watchdog
# too). The command gets the signals' default actions back.
trap '' TERM INT HUP
(trap - TERM HUP; exec "$@") 3<&- 2>&4 4>&- &
child=$!
(exec cat >/dev/null 4>&-) <&3 &
reader=$!
exec 3<&- 4>&-
# Signals the watchdog's process group when it leads one, else the command alone.
stop() { # stop <signal>
  if kill -0 -- "-$$" 2>/dev/null; then kill "-$1" -- "-$$" 2>/dev/null
  else kill "-$1" "$child" 2>/dev/null; fi
}
while kill -0 "$child" 2>/dev/null; do
  if ! kill -0 "$reader" 2>/dev/null; then
    stop TERM
    sleep 2
    stop KILL
    break
  fi
  # Returns when the command or the reader ends.
  wait -n "$child" "$reader" 2>/dev/null
done
kill -KILL "$reader" 2>/dev/null
wait "$child"
