# Shared by the suite-*.sh scripts (sourced; ME names the script in messages).

# suite_need_tools TOOL...: exit 2, naming the first tool that is missing.
suite_need_tools () {
  local tool
  for tool in "$@"; do
    if ! command -v "$tool" > /dev/null; then
      echo "$ME: $tool not installed" >&2
      exit 2
    fi
  done
}

# suite_resolve_paths: $runtime to an absolute path to an executable (a bare
# name through $PATH) and $results to an absolute path, or exit 2.
suite_resolve_paths () {
  case $runtime in
    /*) ;;
    */*) runtime=$PWD/$runtime ;;
    *)
      local found
      found=$(command -v "$runtime") || { echo "$ME: runtime not found: $runtime" >&2; exit 2; }
      runtime=$found
      ;;
  esac
  if [ ! -x "$runtime" ]; then
    echo "$ME: runtime not executable: $runtime" >&2
    exit 2
  fi
  case $results in /*) ;; *) results=$PWD/$results ;; esac
}
