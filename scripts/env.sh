# Sourced by the scripts: build settings shared by every entry point.
# ccache keys on paths relative to the parent folder, so clones side by side share hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
# Our cpu engine runs its own thread pool; OpenBLAS must not spawn a second one.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
