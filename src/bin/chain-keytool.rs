/// Freed memory is wiped: no buffer that held a passphrase or a key outlives its use.
#[global_allocator]
static ALLOC: chain_node::wipe_alloc::WipingAllocator = chain_node::wipe_alloc::WipingAllocator;

fn main() -> std::process::ExitCode {
    chain_node::keytool::main()
}
