// A self-signed certificate and its private key, made with OpenSSL's API at run time (nothing
// secret is kept in the repository) and written as PEM files into a directory the caller owns
// (a RunDir, which removes them): a P-256 key, the certificate valid from an hour ago for a day,
// its subject alternative name `san` ("IP:127.0.0.1", "DNS:other.example").
// Thread-safety: free function. Errors: a failure of OpenSSL throws std::runtime_error (a test
// set-up that cannot proceed).
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace drk::testing {

struct CertificateFiles {
  std::string certificate;  // PEM, also what a client is to trust
  std::string key;          // PEM, unencrypted
};

inline CertificateFiles write_self_signed_certificate(const std::filesystem::path& directory, const std::string& name,
                                                      const std::string& san) {
  const auto require = [](bool ok, const char* what) {
    if (!ok) throw std::runtime_error(std::string("making a self-signed certificate: ") + what + " failed");
  };
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  require(key != nullptr, "EVP_EC_gen");
  std::unique_ptr<X509, decltype(&X509_free)> certificate(X509_new(), X509_free);
  require(certificate != nullptr, "X509_new");
  require(X509_set_version(certificate.get(), 2) == 1, "X509_set_version");
  require(ASN1_INTEGER_set(X509_get_serialNumber(certificate.get()), 1) == 1, "the serial number");
  require(X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600) != nullptr, "notBefore");
  require(X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 24 * 3600) != nullptr, "notAfter");
  require(X509_set_pubkey(certificate.get(), key.get()) == 1, "X509_set_pubkey");
  X509_NAME* subject = X509_get_subject_name(certificate.get());
  require(X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                     reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0) == 1,
          "the subject");
  require(X509_set_issuer_name(certificate.get(), subject) == 1, "the issuer");
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, certificate.get(), certificate.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, san}, std::pair{NID_basic_constraints, std::string("critical,CA:TRUE")}}) {
    std::unique_ptr<X509_EXTENSION, decltype(&X509_EXTENSION_free)> extension(
        X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str()), X509_EXTENSION_free);
    require(extension != nullptr && X509_add_ext(certificate.get(), extension.get(), -1) == 1, "an extension");
  }
  require(X509_sign(certificate.get(), key.get(), EVP_sha256()) > 0, "X509_sign");

  CertificateFiles files{(directory / (name + ".crt")).string(), (directory / (name + ".key")).string()};
  const auto write = [&](const std::string& path, const auto& pem_write) {
    std::unique_ptr<FILE, decltype(&std::fclose)> file(std::fopen(path.c_str(), "w"), std::fclose);
    require(file != nullptr && pem_write(file.get()) == 1, ("writing " + path).c_str());
  };
  write(files.certificate, [&](FILE* file) { return PEM_write_X509(file, certificate.get()); });
  write(files.key, [&](FILE* file) {
    return PEM_write_PrivateKey(file, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  return files;
}

}  // namespace drk::testing
