//! The configuration read from flags and environments as the server would read it.

use super::*;

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn the_auth_token_comes_from_a_file_a_variable_or_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    let file = dir.path().join("tok");
    std::fs::write(&file, "s3cret\n").unwrap();
    let file = file.to_string_lossy().into_owned();
    let with = |args: ServerArgs, env: &dyn Fn(&str) -> Option<String>| {
        Config::from_args_with_env(
            &ServerArgs {
                root: Some(root.clone()),
                ..args
            },
            env,
        )
    };
    let by_flag = ServerArgs {
        auth_token_file: Some(file.clone()),
        ..Default::default()
    };
    assert_eq!(
        with(by_flag, &|_| None).unwrap().auth_token.as_deref(),
        Some("s3cret")
    );
    let f = file.clone();
    let by_env = move |n: &str| (n == AUTH_TOKEN_FILE_ENV).then(|| f.clone());
    assert_eq!(
        with(ServerArgs::default(), &by_env)
            .unwrap()
            .auth_token
            .as_deref(),
        Some("s3cret")
    );
    let direct = |n: &str| (n == AUTH_TOKEN_ENV).then(|| "t2".to_string());
    assert_eq!(
        with(ServerArgs::default(), &direct)
            .unwrap()
            .auth_token
            .as_deref(),
        Some("t2")
    );
    let both = ServerArgs {
        auth_token_file: Some(file.clone()),
        auth_token: Some("x".into()),
        ..Default::default()
    };
    assert_eq!(
        with(both, &|_| None).unwrap_err().code,
        "invalid_auth_token"
    );
    std::fs::write(dir.path().join("empty"), "\n").unwrap();
    let empty = ServerArgs {
        auth_token_file: Some(dir.path().join("empty").to_string_lossy().into_owned()),
        ..Default::default()
    };
    assert_eq!(
        with(empty, &|_| None).unwrap_err().code,
        "invalid_auth_token"
    );
    let missing = ServerArgs {
        auth_token_file: Some(dir.path().join("nope").to_string_lossy().into_owned()),
        ..Default::default()
    };
    assert_eq!(
        with(missing, &|_| None).unwrap_err().code,
        "invalid_auth_token"
    );
}

#[test]
fn defaults_are_valid_and_loopback() {
    let c = Config::from_args_with_env(&ServerArgs::default(), &|_| None).unwrap();
    assert!(c.host.is_loopback());
    assert_eq!(
        (c.port, c.backend, c.max_output_bytes),
        (0, Backend::Builtin, 10_240)
    );
    assert_eq!(c.pruner_timeout, Duration::from_millis(2000));
}

#[test]
fn flag_beats_env_and_jeeves_beats_mcp() {
    let env = env_of(&[
        ("JEEVES_MCP_PRUNER_PORT", "7001"),
        ("MCP_PRUNER_PORT", "7002"),
    ]);
    assert_eq!(
        Config::from_args_with_env(&ServerArgs::default(), &env)
            .unwrap()
            .port,
        7001
    );
    let args = ServerArgs {
        port: Some("7003".into()),
        ..Default::default()
    };
    assert_eq!(Config::from_args_with_env(&args, &env).unwrap().port, 7003);
}

#[test]
fn invalid_values_name_field_and_code() {
    // (environment, expected code, expected field)
    type Case = (
        &'static [(&'static str, &'static str)],
        &'static str,
        &'static str,
    );
    let cases: &[Case] = &[
        (
            &[("JEEVES_PRUNER_TIMEOUT_MS", "abc")],
            "invalid_timeout_ms",
            "JEEVES_PRUNER_TIMEOUT_MS",
        ),
        (
            &[("JEEVES_PRUNER_TIMEOUT_MS", "50")],
            "invalid_timeout_ms",
            "JEEVES_PRUNER_TIMEOUT_MS",
        ),
        (
            &[("JEEVES_MCP_PRUNER_PORT", "70000")],
            "invalid_port",
            "JEEVES_MCP_PRUNER_PORT",
        ),
        (
            &[("JEEVES_MCP_PRUNER_HOST", "10.0.0.1")],
            "invalid_host",
            "JEEVES_MCP_PRUNER_HOST",
        ),
        (
            &[("JEEVES_MCP_PRUNER_ROOT_DIR", "/definitely/not/here")],
            "invalid_root_dir",
            "JEEVES_MCP_PRUNER_ROOT_DIR",
        ),
        (
            &[("JEEVES_PRUNER_ENDPOINT", "ftp://x")],
            "invalid_pruner_endpoint",
            "JEEVES_PRUNER_ENDPOINT",
        ),
        (
            &[("JEEVES_MCP_PRUNER_MAX_PRUNE_INPUT_BYTES", "12")],
            "invalid_max_prune_input_bytes",
            "JEEVES_MCP_PRUNER_MAX_PRUNE_INPUT_BYTES",
        ),
        (
            &[("MCP_PRUNER_BACKEND", "http")],
            "invalid_pruner_endpoint",
            "JEEVES_PRUNER_ENDPOINT",
        ),
        (
            &[("MCP_PRUNER_TOOLS", "read,nope")],
            "invalid_tools",
            "MCP_PRUNER_TOOLS",
        ),
    ];
    for (pairs, code, field) in cases {
        let env = env_of(pairs);
        let err = Config::from_args_with_env(&ServerArgs::default(), &env).unwrap_err();
        assert_eq!(
            (err.code, err.field.as_str()),
            (*code, *field),
            "{pairs:?}: {err}"
        );
        assert!(err.message.contains("expected"), "{err}");
    }
}

#[test]
fn endpoint_selects_http_backend() {
    let env = env_of(&[("JEEVES_PRUNER_ENDPOINT", "http://127.0.0.1:9/prune")]);
    assert_eq!(
        Config::from_args_with_env(&ServerArgs::default(), &env)
            .unwrap()
            .backend,
        Backend::Http
    );
}

#[test]
fn seed_000_booleans() {
    for t in ["1", "true", "YES", "on"] {
        assert_eq!(parse_bool(t), Some(true));
    }
    for f in ["0", "false", "no", "off"] {
        assert_eq!(parse_bool(f), Some(false));
    }
    assert_eq!(parse_bool("maybe"), None);
}

#[test]
fn an_unreadable_yes_no_value_is_an_error_naming_its_source() {
    for (var, code) in [
        ("MCP_PRUNER_OUTPUT_SCHEMAS", "invalid_output_schemas"),
        ("MCP_PRUNER_ALLOW_REMOTE", "invalid_allow_remote"),
        ("MCP_PRUNER_NO_LEDGER", "invalid_no_ledger"),
    ] {
        let env = |k: &str| (k == var).then(|| "maybe".to_string());
        let e = Config::from_args_with_env(&ServerArgs::default(), &env).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), (code, var), "{e}");
        assert!(e.message.contains(BOOL_SPELLINGS), "{e}");
    }
    let args = ServerArgs {
        output_schemas: Some("sometimes".into()),
        ..Default::default()
    };
    let e = Config::from_args_with_env(&args, &|_| None).unwrap_err();
    assert_eq!(e.field, "--output-schemas");
    // A flag's value wins over the variable, both ways.
    let on = |k: &str| (k == "MCP_PRUNER_OUTPUT_SCHEMAS").then(|| "YES".to_string());
    let off = ServerArgs {
        output_schemas: Some("0".into()),
        ..Default::default()
    };
    assert!(
        !Config::from_args_with_env(&off, &on)
            .unwrap()
            .output_schemas
    );
    assert!(
        Config::from_args_with_env(&ServerArgs::default(), &on)
            .unwrap()
            .output_schemas
    );
}

#[test]
fn the_ledger_follows_xdg_and_can_be_turned_off() {
    let env = |k: &str| match k {
        "XDG_DATA_HOME" => Some("/data".to_string()),
        "HOME" => Some("/home/u".to_string()),
        _ => None,
    };
    assert_eq!(
        default_ledger_path(&env).unwrap(),
        Path::new("/data/mcp-pruner/ledger.sqlite3")
    );
    let env = |k: &str| (k == "HOME").then(|| "/home/u".to_string());
    assert_eq!(
        default_ledger_path(&env).unwrap(),
        Path::new("/home/u/.local/share/mcp-pruner/ledger.sqlite3")
    );
    let args = ServerArgs {
        root: Some("/".into()),
        ledger: Some("relative.db".into()),
        ..Default::default()
    };
    let e = Config::from_args_with_env(&args, &|_| None).unwrap_err();
    assert_eq!((e.code, e.field.as_str()), ("invalid_ledger", "--ledger"));
    assert_eq!(pinned_ledger(&env), None, "HOME alone finds the same file");
    let xdg = |k: &str| match k {
        "XDG_DATA_HOME" => Some("/data".to_string()),
        "HOME" => Some("/home/u".to_string()),
        _ => None,
    };
    assert_eq!(
        pinned_ledger(&xdg).unwrap(),
        Path::new("/data/mcp-pruner/ledger.sqlite3")
    );
    let off = |k: &str| (k == "MCP_PRUNER_LEDGER").then(|| "off".to_string());
    assert_eq!(pinned_ledger(&off), None);
    let no = |k: &str| match k {
        "MCP_PRUNER_LEDGER" => Some("/x/ledger.sqlite3".to_string()),
        "MCP_PRUNER_NO_LEDGER" => Some("1".to_string()),
        _ => None,
    };
    assert_eq!(pinned_ledger(&no), None, "no ledger, nothing to pin");
    let args = ServerArgs {
        root: Some("/".into()),
        ..Default::default()
    };
    assert!(
        Config::from_args_with_env(&args, &off)
            .unwrap()
            .ledger
            .is_none()
    );
}
