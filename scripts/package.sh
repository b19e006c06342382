#!/usr/bin/env bash
# Build what spark-submit needs, into dist/ (git-ignored):
#
#   dist/kafka_security_audit-<version>-py3-none-any.whl  the project as a pure-Python wheel
#   dist/kafka_security_audit.zip                         jobs/ transforms/ schemas/ for --py-files
#   dist/submit.py                                        the thin driver (source: jobs/submit.py)
#
# With --env it also packs the third-party dependencies the Python workers need (pyarrow,
# pandas, deltalake, cryptography, ...; not pyspark, which every Spark installation brings) with
# venv-pack, for --archives:
#
#   dist/kafka_security_audit-env.tar.gz                  spark-submit --archives ...#environment
#
# Usage: bash scripts/package.sh [--env]
# Environment: PYTHON, the interpreter that builds (default .venv/bin/python, else python3);
# DIST_DIR, the output folder (default dist/).
# The wheel is built by pip in an isolated build environment from a clean copy of the sources
# (no build/ or *.egg-info left in the checkout, no stale files from an earlier build).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

with_env=0
for arg in "$@"; do
  case "$arg" in
    --env) with_env=1 ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package: unknown argument $arg (expected --env)" >&2; exit 2 ;;
  esac
done

python_bin="${PYTHON:-}"
if [ -z "$python_bin" ]; then
  if [ -x .venv/bin/python ]; then python_bin="$root/.venv/bin/python"; else python_bin=python3; fi
fi
case "$python_bin" in
  */*) python_bin="$(cd "$(dirname "$python_bin")" && pwd)/$(basename "$python_bin")" ;;
  *) python_bin="$(command -v "$python_bin")" ;;
esac
packages=(jobs transforms schemas)
name=kafka_security_audit
version="$("$python_bin" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"

dist="${DIST_DIR:-dist}"
mkdir -p "$dist"
dist="$(cd "$dist" && pwd)"
rm -f "$dist/$name"-*.whl "$dist/$name.zip" "$dist/$name-env.tar.gz" "$dist/submit.py"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

# A clean copy of what the wheel is built from: the packages' .py files and the package data
# pyproject.toml lists (py.typed, the request log's Java sources, compiled where the job runs
# by jobs.jvm_parsers, the log4j2 settings, the JIT directives, the report's templates).
cp pyproject.toml README.md "$stage"/
for package in "${packages[@]}"; do
  find "$package" -type f -name '*.py' -not -path '*/__pycache__/*' -exec cp --parents {} "$stage"/ \;
done
"$python_bin" - "$stage" "${packages[@]}" <<'EOF'
import shutil
import sys
import tomllib
from pathlib import Path

stage, packages = Path(sys.argv[1]), sys.argv[2:]
data = tomllib.load(open("pyproject.toml", "rb"))["tool"]["setuptools"]["package-data"]
for package in packages:
    for pattern in data.get(package, []):
        for path in sorted(Path(package).glob(pattern)):
            if path.is_file():
                (stage / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, stage / path)
EOF

echo "package: wheel $name-$version"
"$python_bin" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$dist" "$stage"
wheel="$dist/$name-$version-py3-none-any.whl"
[ -f "$wheel" ] || { echo "package: $wheel was not built" >&2; exit 1; }

echo "package: $dist/$name.zip (for --py-files)"
(cd "$stage" && "$python_bin" - "$dist/$name.zip" "${packages[@]}" <<'EOF'
import sys
import zipfile
from pathlib import Path

out, packages = sys.argv[1], sys.argv[2:]
files = sorted(p for pkg in packages for p in Path(pkg).rglob("*") if p.is_file())
with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
    for path in files:
        # Fixed timestamps: the same sources give the same zip.
        info = zipfile.ZipInfo(path.as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        archive.writestr(info, path.read_bytes())
print(f"package: {len(files)} files in {out}")
EOF
)

cp jobs/submit.py "$dist/submit.py"
echo "package: $dist/submit.py (the driver)"

if [ "$with_env" = 1 ]; then
  env_dir="$stage/environment"
  echo "package: packing the third-party dependencies with venv-pack (a minute or two)"
  "$python_bin" -m venv "$env_dir"
  pip_env=("$env_dir/bin/python" -m pip install --quiet --disable-pip-version-check)
  "${pip_env[@]}" --upgrade pip
  # The project's dependencies except pyspark (the cluster's Spark provides it); delta-spark's
  # Python module only, its pyspark dependency likewise.
  deps="$("$python_bin" - <<'EOF'
import re
import tomllib

deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
print("\n".join(d for d in deps if re.split(r"[<>=!~ \[;]", d)[0] not in ("pyspark", "delta-spark")))
EOF
)"
  delta_spark="$("$python_bin" -c 'import tomllib; print(next(d for d in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"] if d.startswith("delta-spark")))')"
  mapfile -t dep_list <<<"$deps"
  "${pip_env[@]}" "${dep_list[@]}" venv-pack==0.2.0
  "${pip_env[@]}" --no-deps "$delta_spark" "$wheel"
  "$env_dir/bin/venv-pack" --quiet --force -p "$env_dir" -o "$dist/$name-env.tar.gz"
  echo "package: $dist/$name-env.tar.gz (spark-submit --archives $dist/$name-env.tar.gz#environment)"
fi
ls -l "$dist/$name"* "$dist/submit.py"
