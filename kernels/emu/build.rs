// The emulator binary exports the SDK's C functions; tools find them with dlsym in the global
// scope, which needs them in the dynamic symbol table.
fn main() {
    println!("cargo:rustc-link-arg-bins=-rdynamic");
}
