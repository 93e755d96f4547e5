//! The opt-in creation-site tag (`pytato_core::created_at`): the user's line, not the library's;
//! ignored by equality; shown in errors about the node. Its own test binary: recording is
//! process-wide.

use pytato_core::created_at::{CreatedAt, record_creation_sites};
use pytato_core::function::Function;
use pytato_core::{DType, Error, TagSet};
use pytato_frontend as pt;

fn site(a: &pytato_core::Array) -> CreatedAt {
    *a.tags().of_type::<CreatedAt>().next().expect("a creation site")
}

#[test]
fn nodes_carry_the_users_line_and_equality_ignores_it() {
    record_creation_sites(true);
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let line = line!() + 1;
    let y = pt::sin(&(&x * 2.0)).unwrap();
    let z = pt::sin(&(&x * 2.0)).unwrap();
    assert_eq!((site(&y).file, site(&y).line), (file!(), line));
    assert_eq!(site(&z).line, line + 1);
    // Nodes a frontend function builds inside (the scalar 2.0 broadcast, the product) carry the
    // user's line too: the operator's.
    let product = &y.children()[0];
    assert_eq!(site(product).file, file!());
    // Written twice on two lines, still one node.
    assert_eq!(y, z);
    use std::hash::{Hash, Hasher};
    let hash = |a: &pytato_core::Array| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        a.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&y), hash(&z));
    // An error about the node says where it was made.
    let Err(Error::InvalidArgument { message, .. }) =
        Function::new(vec![y.clone()], vec![("r", x.clone())], TagSet::new())
    else {
        panic!("a parameter must be a placeholder")
    };
    assert!(message.contains(&format!("created at {}:{line}", file!())), "{message}");

    // Off: no tags. And the cost of recording, for the note (no threshold: this machine is shared).
    let chain = |n: usize| {
        let start = std::time::Instant::now();
        let mut a = x.clone();
        for _ in 0..n {
            a = &a + 1.0;
        }
        (a, start.elapsed())
    };
    let (on, with) = chain(100_000);
    assert_eq!(site(&on).file, file!());
    record_creation_sites(false);
    let (off, without) = chain(100_000);
    assert!(off.tags().of_type::<CreatedAt>().next().is_none());
    assert_eq!(on, off);
    eprintln!("100,000 additions: {with:?} recording, {without:?} not");
}
