/// Freed memory is wiped: no buffer that held a passphrase or a key outlives its use.
#[global_allocator]
static ALLOC: chain_node::wipe_alloc::WipingAllocator = chain_node::wipe_alloc::WipingAllocator;

fn main() -> std::process::ExitCode {
    let cfg = chain_node::node::Config::from_args();
    std::process::ExitCode::from(chain_node::node::run(cfg) as u8)
}
