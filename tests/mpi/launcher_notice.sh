# Sourced by the test scripts that compare a job's standard output byte for byte (replica_compare.sh,
# replica_sdc.sh).
# NOTE: MPICH's hydra sometimes writes its own notice of a killed rank to the job's standard output
# ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Hangup (signal 1)" and two more lines: seen in
# replica.montecarlo_pi, replica.ep_class_S and replica.sdc_fence). It is the launcher's text, not the
# program's: left out.

# without_launcher_notice FILE: FILE's lines, hydra's notice left out.
without_launcher_notice() {
  grep -avE '^(YOUR APPLICATION TERMINATED WITH THE EXIT STRING: .*|This typically refers to a problem with your application\.|Please see the FAQ page for debugging suggestions)$' "$1"
}
