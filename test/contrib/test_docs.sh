#!/bin/bash
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The user docs say what the product is:
#  - docs/building.md's configuration table names every UCX_MLX5_UMR_*
#    variable: each field of the module's config tables (src/uct/mlx5_umr),
#    and exactly what `ucx_info -c -f` lists with the module loaded;
#  - the README's verbosity levels of pml_umr_verbose and osc_umr_verbose
#    are those the parameters' own help (ompi_info) names;
#  - README.md, docs/ (and docs/bench/), the help texts and the components'
#    ompi_info help carry no project history: no "issue N", "finding N" or
#    "Left to do" (a planted line is found).
#
set -u
top_srcdir=${top_srcdir:-../..}
top_builddir=${top_builddir:-../..}
ucx_info=${UCX_INFO:-ucx_info}
out=$PWD/test_docs.out.d
rm -rf "$out"
mkdir -p "$out"
suite=docs
. "$(dirname "$0")/../gtest/gtest_format.sh"

prefix=UCX_MLX5_UMR
module=$top_builddir/src/uct/mlx5_umr/.libs/libuct_mlx5_umr.so

# The variables building.md's configuration table names (its first column;
# `_X` after a full name is UCX_MLX5_UMR_X), one a line.
documented() {
    sed -n '/^Configuration: every variable/,/^## /p' "$top_srcdir/docs/building.md" |
        awk -F'|' '/^\| `/ {print $2}' | grep -o '`[A-Z0-9_]*`' | tr -d '`' |
        sed "s/^_/${prefix}_/" | sort -u
}

# The fields of the module's own config tables (md and iface), one a line.
in_tables() {
    cat "$top_srcdir"/src/uct/mlx5_umr/umr_md.c "$top_srcdir"/src/uct/mlx5_umr/umr_iface.c |
        sed -n '/config_table\[\] = {/,/^};/p' | grep -o '^    {"[A-Z0-9_]\+"' |
        sed "s/^    {\"/${prefix}_/; s/\"$//" | sort -u
}

config_tables_documented() {
    local missing
    documented >"$out/documented"
    in_tables >"$out/tables"
    [ "$(wc -l <"$out/tables")" -ge 20 ] || { echo "read too few fields"; cat "$out/tables"; return 1; }
    missing=$(comm -23 "$out/tables" "$out/documented")
    [ -z "$missing" ] || { echo "in the config tables, not in docs/building.md:"; echo "$missing"; return 1; }
}

ucx_info_list_is_documented() {
    [ -f "$module" ] || { echo "no $module"; return 1; }
    LD_PRELOAD=$module UCX_WARN_UNUSED_ENV_VARS=n "$ucx_info" -c -f >"$out/ucx_info" 2>&1 ||
        { tail "$out/ucx_info"; return 1; }
    grep -o "^${prefix}_[A-Z0-9_]*" "$out/ucx_info" | sort -u >"$out/listed"
    [ -s "$out/listed" ] || { echo "ucx_info lists no ${prefix}_ variable"; return 1; }
    documented >"$out/documented"
    diff "$out/listed" "$out/documented" >"$out/diff" ||
        { echo "< listed by ucx_info -c -f, > documented in docs/building.md:"; cat "$out/diff"; return 1; }
}

# ---- verbosity levels ---------------------------------------------------
make -s -C "$top_builddir" install-dirs >"$out/dirs" 2>/dev/null
sys_components=$(sed -n 's/^ompi_sys_componentdir //p' "$out/dirs")
scratch=$out/components
mkdir -p "$scratch"
have_ompi=no
for c in pml osc; do
    so=$top_builddir/src/ompi/${c}_umr/.libs/mca_${c}_umr.so
    [ -f "$so" ] && ln -sf "$so" "$scratch/" && have_ompi=yes
done

# the parameters' help of framework FW's umr, "name<TAB>help" a line
help_of() {
    OMPI_MCA_mca_base_component_path=$scratch:$sys_components \
        ompi_info --param "$1" umr --level 9 --parsable |
        sed -n 's/^mca:[a-z]*:umr:param:\([a-z0-9_]*\):help:/\1\t/p'
}

# the integers a text names, one a line, sorted
numbers() { grep -o '\b[0-9]\+\b' | sort -nu; }

readme_levels_are_the_help() {
    local fw p r h bad=0
    for fw in pml osc; do
        p=${fw}_umr_verbose
        help_of $fw >"$out/help.$fw"
        h=$(awk -F'\t' -v p="$p" '$1 == p {print $2}' "$out/help.$fw")
        [ -n "$h" ] || { echo "ompi_info has no help for $p"; bad=1; continue; }
        r=$(grep "^| \`$p\` |" "$top_srcdir/README.md" | awk -F'|' '{print $4}')
        [ -n "$r" ] || { echo "README.md has no row for $p"; bad=1; continue; }
        # the README's levels: N before a colon
        diff <(grep -o '\b[0-9]\+:' <<<"$r" | tr -d ':' | sort -nu) <(numbers <<<"$h") \
            >"$out/levels.$fw" ||
            { echo "$p: < README.md, > its help ($h):"; cat "$out/levels.$fw"; bad=1; }
    done
    return $bad
}

# ---- no history -----------------------------------------------------------
history='\b[Ii]ssues? #?[0-9]+|\b[Ff]indings? [0-9]+|[Ll]eft to do|^#+ *(To do|TODO)'

# FILE... : every line that tells history, with its file and number
history_lines() { grep -n -E "$history" "$@"; }

docs_tell_no_history() {
    local files
    files=("$top_srcdir/README.md" "$top_srcdir"/docs/*.md "$top_srcdir"/docs/bench/*.md
           "$top_srcdir"/src/ompi/*/help-*.txt)
    history_lines "${files[@]}" && { echo "^ history in the user docs"; return 1; }
    if [ "$have_ompi" = yes ]; then
        for fw in pml osc; do help_of $fw; done >"$out/help.all"
        [ -s "$out/help.all" ] || { echo "ompi_info printed no help"; return 1; }
        history_lines "$out/help.all" && { echo "^ history in an ompi_info help"; return 1; }
    fi
    # the check finds a planted line
    printf 'Fixed in issue 31.\n' >"$out/planted.md"
    history_lines "$out/planted.md" >/dev/null || { echo "a planted 'issue 31' was not found"; return 1; }
    return 0
}

check config_tables_documented config_tables_documented
check ucx_info_list_is_documented ucx_info_list_is_documented
if [ "$have_ompi" = yes ]; then
    check readme_levels_are_the_help readme_levels_are_the_help
else
    skip readme_levels_are_the_help "pml/umr not built (no Open MPI headers)"
fi
check docs_tell_no_history docs_tell_no_history
finish
