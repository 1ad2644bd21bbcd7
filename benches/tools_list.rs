//! Benchmark (not a test): the `tools/list` payload of mcp-pruner in bytes and o200k_base tokens,
//! per tool and in total, beside `@modelcontextprotocol/server-filesystem`'s listing saved in
//! `../shared/fs_tools.json` (or the path in `FS_TOOLS_JSON`). Run: `cargo bench --bench tools_list`.

use mcp_pruner::app::App;
use mcp_pruner::config::Config;
use mcp_pruner::tokens::count;
use serde_json::Value;

fn table(label: &str, tools: &[Value]) -> (usize, usize) {
    println!("\n{label}");
    println!("{:<28} {:>8} {:>8}", "tool", "bytes", "tokens");
    let (mut bytes, mut tokens) = (0, 0);
    for t in tools {
        let s = serde_json::to_string(t).unwrap();
        let (b, k) = (s.len(), count(&s));
        bytes += b;
        tokens += k;
        println!(
            "{:<28} {:>8} {:>8}",
            t["name"].as_str().unwrap_or("?"),
            b,
            k
        );
    }
    let whole = serde_json::to_string(&serde_json::json!({ "tools": tools })).unwrap();
    println!(
        "{:<28} {:>8} {:>8}   (whole result: {} bytes, {} tokens; {:.0} tokens/tool)",
        "total",
        bytes,
        tokens,
        whole.len(),
        count(&whole),
        count(&whole) as f64 / tools.len() as f64
    );
    (whole.len(), count(&whole))
}

fn main() {
    let app = App::new(Config::for_root(&std::env::temp_dir()));
    let ours = mcp_pruner::rpc::dispatch::tools_list(&app);
    let (ob, ot) = table(
        "mcp-pruner tools/list (default flags)",
        ours["tools"].as_array().unwrap(),
    );

    let path = std::env::var("FS_TOOLS_JSON").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fs_tools.json").to_string()
    });
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let fs: Value = serde_json::from_str(&text).expect("fs_tools.json is JSON");
            let (fb, ft) = table(
                "@modelcontextprotocol/server-filesystem tools/list",
                fs["tools"].as_array().unwrap(),
            );
            println!(
                "\nmcp-pruner / server-filesystem: {:.1}% of the bytes, {:.1}% of the tokens ({:.1}x fewer tokens)",
                100.0 * ob as f64 / fb as f64,
                100.0 * ot as f64 / ft as f64,
                ft as f64 / ot as f64
            );
        }
        Err(e) => println!("\nbaseline skipped: cannot read {path}: {e}"),
    }
}
