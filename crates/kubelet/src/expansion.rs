//! `$(VAR)` expansion in env values, command and args, exactly as the kubelet does it
//! (third_party/forked/golang/expansion/expand.go): `$(NAME)` becomes the variable's value,
//! or stays `$(NAME)` when the variable is undefined; `$$` is an escaped `$`; anything else
//! is copied as written. No recursion: a value containing `$(X)` is not expanded again.

use std::collections::BTreeMap;

/// Expands `input`, looking names up in `mapping` (`None`: undefined).
pub fn expand(input: &str, mapping: &dyn Fn(&str) -> Option<String>) -> String {
    let bytes = input.as_bytes();
    let mut out = String::new();
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < bytes.len() {
        if bytes[cursor] == b'$' && cursor + 1 < bytes.len() {
            out.push_str(&input[checkpoint..cursor]);
            let (read, is_var, advance) = try_read_variable_name(&input[cursor + 1..]);
            if is_var {
                out.push_str(&mapping(&read).unwrap_or_else(|| format!("$({read})")));
            } else {
                out.push_str(&read);
            }
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    out.push_str(&input[checkpoint.min(input.len())..]);
    out
}

/// `tryReadVariableName`: (what was read, whether it is a variable name, bytes consumed).
fn try_read_variable_name(input: &str) -> (String, bool, usize) {
    let bytes = input.as_bytes();
    match bytes[0] {
        b'$' => ("$".to_string(), false, 1),
        b'(' => match bytes[1..].iter().position(|b| *b == b')') {
            Some(close) => (input[1..close + 1].to_string(), true, close + 2),
            None => ("$(".to_string(), false, 1),
        },
        _ => {
            // An operator that does not begin an expression: itself and the next character.
            let next = input.chars().next().expect("non-empty");
            (format!("${next}"), false, next.len_utf8())
        }
    }
}

/// `MappingFuncFor`: looks a name up in each map in turn.
pub fn mapping_for<'a>(contexts: &'a [&'a BTreeMap<String, String>]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| contexts.iter().find_map(|m| m.get(name).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The cases of third_party/forked/golang/expansion/expand_test.go TestMapReference and
    // TestMapping (the mapping there defines VAR_A=A, VAR_B=B, VAR_C=C, VAR_REF=$(VAR_A),
    // VAR_EMPTY="").
    #[test]
    fn expansion_matches_the_kubelets_forked_expansion_package() {
        let vars: BTreeMap<String, String> = [("VAR_A", "A"), ("VAR_B", "B"), ("VAR_C", "C"), ("VAR_REF", "$(VAR_A)"), ("VAR_EMPTY", "")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let contexts = [&vars];
        let mapping = mapping_for(&contexts);
        let cases = [
            ("whole string", "$(VAR_A)", "A"),
            ("repeat", "$(VAR_A)-$(VAR_A)", "A-A"),
            ("multiple repeats", "$(VAR_A)-$(VAR_B)-$(VAR_B)-$(VAR_B)-$(VAR_A)", "A-B-B-B-A"),
            ("beginning", "$(VAR_A)-1", "A-1"),
            ("middle", "___$(VAR_B)___", "___B___"),
            ("end", "___$(VAR_C)", "___C"),
            ("compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
            ("escape & expand", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
            ("compound escape", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
            ("mixed in escapes", "f000-$$VAR_A", "f000-$VAR_A"),
            ("backslash escape ignored", "foo\\$(VAR_C)bar", "foo\\Cbar"),
            ("backslash escape ignored", "foo\\\\$(VAR_C)bar", "foo\\\\Cbar"),
            ("lots of backslashes", "foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"),
            ("nested var references", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"),
            ("nested var references second type", "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"),
            ("value is a reference", "$(VAR_REF)", "$(VAR_A)"),
            ("value is a reference x 2", "%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"),
            ("empty var", "foo$(VAR_EMPTY)bar", "foobar"),
            ("unterminated expression", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"),
            ("expression without operator", "f00__(VAR_A)__", "f00__(VAR_A)__"),
            ("shell special vars pass through", "$?_boo_$!", "$?_boo_$!"),
            ("bare operators are ignored", "$VAR_A", "$VAR_A"),
            ("undefined vars are passed through", "$(VAR_DNE)", "$(VAR_DNE)"),
            ("multiple (even) operators, var undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
            ("multiple (even) operators, var defined", "$$$$$$(VAR_A)", "$$$(VAR_A)"),
            ("multiple (odd) operators, var undefined", "$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"),
            ("multiple (odd) operators, var defined", "$$$$$$$(VAR_A)", "$$$A"),
            ("missing open expression", "$VAR_A)", "$VAR_A)"),
            ("shell syntax ignored", "${VAR_A}", "${VAR_A}"),
            ("trailing incomplete expression not consumed", "$(VAR_B)_______$(A", "B_______$(A"),
            ("trailing incomplete expression, no content, is not consumed", "$(VAR_C)_______$(", "C_______$("),
            ("operator at end of input string is preserved", "$(VAR_A)foobarzab$", "Afoobarzab$"),
            ("shell escaped incomplete expr", "foo-\\$(VAR_A", "foo-\\$(VAR_A"),
            ("lots of $( in middle", "--$($($($($--", "--$($($($($--"),
            ("lots of $( in beginning", "$($($($($--foo$(", "$($($($($--foo$("),
            ("lots of $( at end", "foo0--$($($($(", "foo0--$($($($("),
            ("escaped operators in variable names are not escaped", "$(foo$$var)", "$(foo$$var)"),
            ("newline not expanded", "\n", "\n"),
        ];
        for (name, input, want) in cases {
            assert_eq!(expand(input, &mapping), want, "{name}: {input:?}");
        }
    }
}
