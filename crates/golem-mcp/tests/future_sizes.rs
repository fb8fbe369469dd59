//! What a call in flight holds: its future. Each of 1,000 calls in flight
//! carries one, so the rare paths (a task driven, a server's request for
//! input answered) are boxed rather than inlined into every call's future
//! (BENCHMARKS.md, "Many servers"). A bound, generous enough for compiler
//! changes, that an inlined rare path breaks.

use golem_mcp::Client;
use golem_mcp::memory::memory_pair;
use serde_json::value::RawValue;

#[tokio::test]
async fn a_call_in_flight_holds_a_small_future() {
    let (transport, _peer) = memory_pair();
    let client = Client::new(transport);
    let arguments = RawValue::from_string("{}".into()).expect("valid JSON");
    let call = client.call_tool("echo", &arguments);
    let size = std::mem::size_of_val(&call);
    println!("call_tool's future: {size} bytes");
    // 2,544 bytes with rustc 1.95 (debug and release alike); 4,048 with
    // the task driver and the input answers inlined.
    let bound = 3 * 1024;
    assert!(
        size <= bound,
        "call_tool's future is {size} bytes (bound {bound})"
    );
}
