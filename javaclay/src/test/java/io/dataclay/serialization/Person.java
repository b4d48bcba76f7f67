package io.dataclay.serialization;

import io.dataclay.api.DataClayObject;
import java.util.ArrayList;
import java.util.List;

/** A test model: plain fields, a reference to another model object and a list of them. */
public class Person extends DataClayObject {
  String name;
  int age;
  Person partner;
  List<Person> friends = new ArrayList<>();
  transient String cache = "not stored";

  Person(String name, int age) {
    this.name = name;
    this.age = age;
  }
}
