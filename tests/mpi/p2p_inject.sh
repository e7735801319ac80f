#!/bin/sh
# p2p_inject.sh SPEC program [args...]: runs the program with COHORT_INJECT_FAILURE=SPEC, where SPEC
# separates entries with '/' instead of ';' (a ';' does not survive CMake's argument lists).
spec=$1
shift
COHORT_INJECT_FAILURE=$(printf '%s' "$spec" | tr '/' ';')
export COHORT_INJECT_FAILURE
exec "$@"
