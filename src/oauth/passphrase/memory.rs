//! Argon2's working memory, allocated once and reused: [`CONCURRENT_CHECKS`] buffers of the
//! stored hash's memory cost (19 MiB each at the default cost), handed to each check in turn.
//!
//! Allocating 19 MiB per check let the process grow after every burst of guesses (26 -> 103 MB on a
//! fresh gateway, more with each new address): the allocator kept the freed blocks in the arenas
//! of the blocking threads that had run the checks. With the pool, the hashing memory is at most
//! `CONCURRENT_CHECKS x m_cost` (38 MiB) whatever the number of guesses or addresses.

use std::sync::Mutex;

use argon2::password_hash::PasswordHash;
use argon2::{Algorithm, Argon2, Block, Params, Version};
use subtle::ConstantTimeEq;

use super::CONCURRENT_CHECKS;

/// The reusable buffers; a check takes one (the semaphore of [`super::Guesses`] makes sure one
/// is free) and gives it back.
#[derive(Debug, Default)]
pub struct Pool(Mutex<Vec<Vec<Block>>>);

impl Pool {
    fn take(&self, blocks: usize) -> Vec<Block> {
        let mut free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut buffer = free.pop().unwrap_or_default();
        if buffer.len() < blocks {
            buffer.resize(blocks, Block::default());
        }
        buffer
    }

    fn give_back(&self, buffer: Vec<Block>) {
        let mut free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if free.len() < CONCURRENT_CHECKS {
            free.push(buffer);
        }
    }

    /// Bytes held by the free buffers.
    #[cfg(test)]
    pub fn held_bytes(&self) -> usize {
        let free = self.0.lock().unwrap_or_else(|e| e.into_inner());
        free.iter().map(|b| b.capacity() * Block::SIZE).sum()
    }

    /// Whether `passphrase` matches the PHC string `phc`, hashed in a pooled buffer.
    pub fn verify(&self, passphrase: &str, phc: &str) -> bool {
        let Ok(hash) = PasswordHash::new(phc) else {
            return false;
        };
        let (Ok(params), Ok(algorithm)) =
            (Params::try_from(&hash), Algorithm::try_from(hash.algorithm))
        else {
            return false;
        };
        let version = match hash.version.map(Version::try_from).transpose() {
            Ok(v) => v.unwrap_or_default(),
            Err(_) => return false,
        };
        let (Some(salt), Some(expected)) = (hash.salt, hash.hash) else {
            return false;
        };
        let mut salt_bytes = [0u8; 64];
        let Ok(salt) = salt.decode_b64(&mut salt_bytes) else {
            return false;
        };
        let blocks = params.block_count();
        let argon = Argon2::new(algorithm, version, params);
        let mut out = vec![0u8; expected.len()];
        let mut buffer = self.take(blocks);
        let hashed = argon
            .hash_password_into_with_memory(
                passphrase.as_bytes(),
                salt,
                &mut out,
                &mut buffer[..blocks],
            )
            .is_ok();
        self.give_back(buffer);
        hashed && bool::from(out.ct_eq(expected.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_reuse_a_bounded_pool() {
        let pool = Pool::default();
        let phc = super::super::hash("correct horse battery").unwrap();
        assert!(pool.verify("correct horse battery", &phc));
        assert!(!pool.verify("correct horse batterY", &phc));
        assert!(!pool.verify("x", "not a hash"));
        let one = pool.held_bytes();
        assert_eq!(one, 19 * 1024 * 1024, "one buffer of the default cost");
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| pool.verify("wrong wrong", &phc));
            }
        });
        assert!(
            pool.held_bytes() <= CONCURRENT_CHECKS * one,
            "{}",
            pool.held_bytes()
        );
    }
}
